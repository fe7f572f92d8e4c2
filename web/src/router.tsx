import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

// A small History API router: every page has a real URL under /ui/ (the server answers
// index.html for all of them), so reloads, bookmarks and the back button work.

export const BASE = '/ui';
const listeners = new Set<() => void>();

export function navigate(to: string, replace = false): void {
  const url = to.startsWith(BASE) ? to : `${BASE}${to}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

export interface Location {
  path: string;
  search: URLSearchParams;
}

function current(): Location {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || '/' : '/';
  return { path: path.length > 1 ? path.replace(/\/$/, '') : path, search: new URLSearchParams(location.search) };
}

export function useLocation(): Location {
  const [where, setWhere] = useState(current);
  useEffect(() => {
    const update = () => setWhere(current());
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return where;
}

/** Matches `/experiments/:id` style patterns; returns the parameters or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const names: string[] = [];
  const regex = new RegExp(
    '^' +
      pattern.replace(/:([a-z_]+)/g, (_m, name: string) => {
        names.push(name);
        return '([^/]+)';
      }) +
      '$',
  );
  const found = regex.exec(path);
  if (!found) return null;
  return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1] ?? '')]));
}

type LinkProps = { href: string; children: ComponentChildren } & Omit<JSX.AnchorHTMLAttributes<HTMLAnchorElement>, 'href'>;

/** A real link (so it can be opened in a new tab) that navigates in place on a plain click. */
export function Link({ href, children, ...rest }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={`${BASE}${href}`} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
