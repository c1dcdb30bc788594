import type { ReactNode } from 'react';

/** A column heading; `number` right-aligns the column, `hidden` names it for screen readers only. */
export type Column = string | { label: string; number?: boolean; hidden?: boolean };

/**
 * A list as a table: named by a caption for screen readers, a row of column headings, then
 * `children` (the rows). It scrolls sideways on its own on a narrow screen.
 */
export function DataTable(props: {
  caption: string;
  columns: ReadonlyArray<Column | false>;
  /** Classes added to the table and to its scroll box. */
  className?: string;
  wrapClassName?: string;
  children: ReactNode;
  foot?: ReactNode;
}) {
  return (
    <div className={props.wrapClassName ? `table-wrap ${props.wrapClassName}` : 'table-wrap'}>
      <table className={props.className ? `table ${props.className}` : 'table'}>
        <caption className="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => {
              if (column === false) return null;
              const { label, number, hidden } =
                typeof column === 'string'
                  ? { label: column, number: false, hidden: false }
                  : column;
              return (
                <th key={label} scope="col" className={number ? 'number' : undefined}>
                  {hidden ? <span className="visually-hidden">{label}</span> : label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
        {props.foot && <tfoot>{props.foot}</tfoot>}
      </table>
    </div>
  );
}

/** The heading of a column of row buttons. */
export const ACTIONS: Column = { label: 'Actions', hidden: true };
