// The pieces every settings list repeats: its three states (skeleton or error with retry, the empty
// text, the rows) and the table that shows the rows in a scrolling wrapper the keyboard can reach.
import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { Loading } from './Loading';

/** Until `rows` are loaded the skeleton (or the error with a retry), `empty` when there are none, else `children(rows)`. */
export function LoadedList<T>(props: {
  rows: T[] | null | undefined;
  error: string | null;
  retry: () => void;
  empty: string;
  children: (rows: T[]) => ComponentChildren;
}) {
  if (!props.rows) return <Loading error={props.error} retry={props.retry} />;
  if (props.rows.length === 0) return <p class="empty">{props.empty}</p>;
  return <>{props.children(props.rows)}</>;
}

/** A column heading: its text, or `{ hidden }` for a column of buttons whose heading only screen readers hear. */
export type Column = string | { hidden: string };

/**
 * A table named `label` (a region, and the caption when `caption` is set) with one header row. A
 * table wider than the screen scrolls sideways in its wrapper, which then takes the focus so the
 * keyboard can scroll it too; one that fits adds no stop to the Tab order.
 */
export function DataTable(props: { label: string; columns: Column[]; caption?: boolean; testId?: string; children: ComponentChildren }) {
  const wrap = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useLayoutEffect(() => {
    const el = wrap.current;
    if (!el) return;
    const measure = () => setScrolls(el.scrollWidth > el.clientWidth);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    if (el.firstElementChild) observer.observe(el.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <div ref={wrap} class="table-wrap" tabIndex={scrolls ? 0 : undefined} role="region" aria-label={props.label}>
      <table class="table" data-testid={props.testId}>
        {props.caption && <caption class="visually-hidden">{props.label}</caption>}
        <thead>
          <tr>
            {props.columns.map((c, i) => (
              <th key={i} scope="col">
                {typeof c === 'string' ? c : <span class="visually-hidden">{c.hidden}</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
