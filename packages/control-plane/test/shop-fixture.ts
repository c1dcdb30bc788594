// The shop source both schema-introspection test files read: its DDL and what it reads as.

/** A MariaDB shop: two tables, a foreign key and a view, listed after the tables and marked. */
export const SHOP_MYSQL = `
  CREATE TABLE customers (id INT PRIMARY KEY, email VARCHAR(100) NOT NULL UNIQUE, name VARCHAR(50));
  CREATE TABLE orders (
    id BIGINT PRIMARY KEY,
    customer_id INT NOT NULL,
    total DECIMAL(10,2),
    CONSTRAINT orders_customer FOREIGN KEY (customer_id) REFERENCES customers(id));
  CREATE VIEW customer_totals AS
    SELECT customer_id, SUM(total) AS spent FROM orders GROUP BY customer_id;
`;

/** What GET …/schema answers for SHOP_MYSQL on MariaDB. */
export const SHOP_SCHEMA = {
  tables: [
    {
      name: 'customers',
      kind: 'table',
      columns: [
        { name: 'id', type: 'int(11)', nullable: false, key: 'PRI' },
        { name: 'email', type: 'varchar(100)', nullable: false, key: 'UNI' },
        { name: 'name', type: 'varchar(50)', nullable: true, key: '' },
      ],
      relations: [],
      // What `customers { orders { … } }` selects: the reverse side of orders' key.
      reverseRelations: [
        {
          name: 'orders',
          fromTable: 'orders',
          fromColumns: ['customer_id'],
          constraintName: 'orders_customer',
        },
      ],
    },
    {
      name: 'orders',
      kind: 'table',
      columns: [
        { name: 'id', type: 'bigint(20)', nullable: false, key: 'PRI' },
        { name: 'customer_id', type: 'int(11)', nullable: false, key: 'MUL' },
        { name: 'total', type: 'decimal(10,2)', nullable: true, key: '' },
      ],
      relations: [
        {
          column: 'customer_id',
          derivedName: 'customer',
          referencedTable: 'customers',
          referencedColumn: 'id',
          constraintName: 'orders_customer',
        },
      ],
      reverseRelations: [],
    },
    {
      name: 'customer_totals',
      kind: 'view',
      columns: [
        { name: 'customer_id', type: 'int(11)', nullable: false, key: '' },
        { name: 'spent', type: 'decimal(32,2)', nullable: true, key: '' },
      ],
      relations: [],
      reverseRelations: [],
    },
  ],
};
