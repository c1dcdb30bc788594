/**
 * The demo shop: customers, products, orders and their line items, generated inside the
 * database with generate_series so that it is the same on every machine and quick to make.
 */
export const DEMO_DATASET_SQL = `
CREATE TABLE customers (
  id integer PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL UNIQUE,
  country char(2) NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE TABLE products (
  id integer PRIMARY KEY,
  name text NOT NULL,
  category text NOT NULL,
  price numeric(10,2) NOT NULL,
  in_stock boolean NOT NULL
);
CREATE TABLE orders (
  id bigint PRIMARY KEY,
  customer_id integer NOT NULL REFERENCES customers(id),
  status text NOT NULL,
  placed_on date NOT NULL,
  note text
);
CREATE TABLE order_items (
  id bigint PRIMARY KEY,
  order_id bigint NOT NULL REFERENCES orders(id),
  product_id integer NOT NULL REFERENCES products(id),
  quantity integer NOT NULL,
  unit_price numeric(10,2) NOT NULL
);
INSERT INTO customers
SELECT i,
       (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Frances','Ken','Radia','Tim'])[1 + i % 10]
         || ' ' || (ARRAY['Lovelace','Hopper','Turing','Dijkstra','Liskov','Knuth','Allen','Thompson','Perlman','Berners-Lee'])[1 + (i / 10) % 10],
       'customer' || i || '@example.com',
       (ARRAY['GB','US','DE','FR','IS','GR','JP','BR'])[1 + i % 8],
       timestamptz '2023-01-01 00:00:00+00' + (i * interval '37 minutes')
FROM generate_series(1, 5000) AS i;
INSERT INTO products
SELECT i,
       (ARRAY['Lamp','Chair','Desk','Mug','Notebook','Pen','Backpack','Cable','Monitor','Keyboard'])[1 + i % 10] || ' ' || i,
       (ARRAY['home','office','kitchen','travel','electronics'])[1 + i % 5],
       round((5 + (i * 7919 % 49500) / 100.0)::numeric, 2),
       i % 7 <> 0
FROM generate_series(1, 500) AS i;
INSERT INTO orders
SELECT i,
       1 + (i * 7 % 5000),
       (ARRAY['paid','shipped','delivered','cancelled','open'])[1 + i % 5],
       date '2024-01-01' + (i % 365),
       CASE WHEN i % 9 = 0 THEN 'gift wrap, please' END
FROM generate_series(1, 30000) AS i;
INSERT INTO order_items
SELECT i,
       1 + (i - 1) / 2,
       1 + (i * 31 % 500),
       1 + i % 4,
       round((5 + ((1 + (i * 31 % 500)) * 7919 % 49500) / 100.0)::numeric, 2)
FROM generate_series(1, 60000) AS i;
`;

export const DEMO_QUERIES = [
  "customers (country = 'IS') { id name email } ORDER BY name LIMIT 5",
  "orders (status = 'paid') { id placed_on customer { name } order_items { quantity product { name price } } } LIMIT 3",
  'order_items { product_id COUNT(*) SUM(quantity) } ORDER BY sum_quantity DESC LIMIT 5',
];
