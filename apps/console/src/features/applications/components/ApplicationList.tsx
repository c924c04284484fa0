import { usePagedList } from '../../../api/paging';
import { Link } from '../../../app/router';
import { PagedTable } from '../../../components/ListStatus';
import { NewLink, Page } from '../../../components/Page';
import { formatTime, TIME_ZONE } from '../../../format';
import { useApplicationList } from '../api/applications';

/** The tenant's applications, newest first, *Load more* following the cursor; `notice` says what just happened. */
export function ApplicationList({ canCreate, notice }: { canCreate: boolean; notice: string }) {
  return (
    <Page title="Applications" actions={canCreate && <NewLink to="applications/new">New application</NewLink>}>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <PagedTable
        list={usePagedList(useApplicationList())}
        caption="Applications, newest first"
        columns={['Name', 'Type', 'Permissions', 'Rules', `Created (${TIME_ZONE})`, 'Last used']}
        row={(app) => (
          <tr key={app.id} data-application-id={app.id}>
            <td>
              <Link to={`applications/${app.id}`}>{app.name}</Link>
            </td>
            <td>{app.type}</td>
            <td>{app.permissions.join(', ')}</td>
            <td>{app.rules.length}</td>
            <td>{formatTime(app.created_at)}</td>
            <td>{formatTime(app.last_used_at, 'never')}</td>
          </tr>
        )}
        testId="applications-status"
        empty="No applications."
        shown={(n, more) => (more ? `${n} applications shown; more exist.` : `${n} applications shown: all of them.`)}
        moreClassName="secondary"
      />
    </Page>
  );
}
