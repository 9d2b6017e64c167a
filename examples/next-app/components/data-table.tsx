/** The card every list of the dashboard uses: a titled section with a table, or a line when empty. */
import { Fragment, type ReactNode } from "react";

/** One column of a {@link DataTable}. */
export interface Column<T> {
  label: string;
  /** Right-aligned tabular figures (amounts). */
  numeric?: boolean;
  cell: (row: T) => ReactNode;
}

/** Props of {@link DataTable}. */
export interface DataTableProps<T> {
  /** Id of the heading, which names both the section and the table. */
  id: string;
  title: string;
  /** Shown instead of the table when there are no rows. */
  empty: string;
  rows: readonly T[];
  rowKey: (row: T) => string;
  /** The first column is the row header. */
  columns: readonly [Column<T>, ...Column<T>[]];
  /**
   * An optional line under a row, across all columns (null for none), for what does not fit a
   * column; its cell is tied to the row's header for assistive technology.
   */
  detail?: (row: T) => ReactNode;
  /** Rendered below the table (or the empty line). */
  children?: ReactNode;
}

const numClass = (column: { numeric?: boolean | undefined }) => (column.numeric ? "num" : undefined);

/** A `<section class="card">` with an accessible table of `rows`; see {@link DataTableProps}. */
export function DataTable<T>({ id, title, empty, rows, rowKey, columns, detail, children }: DataTableProps<T>) {
  const [header, ...rest] = columns;
  return (
    <section aria-labelledby={id} className="card">
      <h2 id={id}>{title}</h2>
      {rows.length === 0 ? (
        <p className="empty">{empty}</p>
      ) : (
        <div className="scroll">
          <table aria-labelledby={id}>
            <thead>
              <tr>
                {columns.map((column) => (
                  <th key={column.label} scope="col" className={numClass(column)}>
                    {column.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => {
                const key = rowKey(row);
                const extra = detail?.(row) ?? null;
                return (
                  <Fragment key={key}>
                    <tr className={extra === null ? undefined : "has-detail"}>
                      <th scope="row" id={`${id}-${key}`}>
                        {header.cell(row)}
                      </th>
                      {rest.map((column) => (
                        <td key={column.label} className={numClass(column)}>
                          {column.cell(row)}
                        </td>
                      ))}
                    </tr>
                    {extra !== null && (
                      <tr className="detail-row">
                        <td colSpan={columns.length} headers={`${id}-${key}`}>
                          {extra}
                        </td>
                      </tr>
                    )}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {children}
    </section>
  );
}
