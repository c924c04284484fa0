import { useEffect, useRef } from 'react';
import type { Log } from '../../../api/client';
import { TIME_ZONE, timeFormat } from '../../../format';

/** One log's every field, with its chain position and hash; the focus goes to its heading when it opens. */
export function LogDetail({ log, onClose }: { log: Log; onClose: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [log.id]);
  const rows: Array<[string, string | number | undefined]> = [
    ['Id', log.id],
    ['Time (UTC)', log.created_at],
    [`Time (${TIME_ZONE})`, timeFormat.format(new Date(log.created_at))],
    ['Entity type', log.entity_type],
    ['Entity id', log.entity_id],
    ['Operation', log.operation],
    ['Actor type', log.actor_type],
    ['Actor id', log.actor_id],
    ['Message', log.message],
    ['Request id', log.request_id],
    ['Source address', log.source_ip],
    ['User agent', log.user_agent],
    ['Chain position', log.position],
    ['Chain hash', log.hash],
  ];
  return (
    <aside className="detail" aria-labelledby="detail-title">
      <h2 id="detail-title" tabIndex={-1} ref={heading}>
        Log {log.position}
      </h2>
      <dl>
        {rows
          .filter(([, v]) => v !== undefined && v !== '')
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd className="mono">{String(v)}</dd>
            </div>
          ))}
      </dl>
      <button type="button" onClick={onClose}>
        Close details
      </button>
    </aside>
  );
}
