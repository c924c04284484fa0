import { ReactNode } from 'react';
import { Link } from '../app/router';

/** A page's frame: one `<h1>` (focused after a navigation, so a screen reader hears where it is) and its actions. */
export function Page({ title, actions, className, children }: { title: string; actions?: ReactNode; className?: string; children?: ReactNode }) {
  return (
    <main className={className ? `content ${className}` : 'content'}>
      <div className="page-head">
        <h1 tabIndex={-1}>{title}</h1>
        {actions && <div className="page-actions">{actions}</div>}
      </div>
      {children}
    </main>
  );
}

/** A list page's action that opens its create form (`to`), labelled `children`. */
export function NewLink({ to, children }: { to: string; children: ReactNode }) {
  return (
    <Link to={to} className="button">
      {children}
    </Link>
  );
}
