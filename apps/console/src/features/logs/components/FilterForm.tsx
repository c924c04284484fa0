import { FormEvent, useState } from 'react';
import type { EntityType } from '../../../api/client';
import { isoToLocalInput, localInputToIso, TIME_ZONE } from '../../../format';
import { Filters, NO_FILTERS } from '../api/filters';

/** The filters as a form: entity type, entity id, actor id and a date range in the browser's time zone. */
export function FilterForm({ initial, entityTypes, onApply }: { initial: Filters; entityTypes: EntityType[]; onApply: (f: Filters) => void }) {
  const [draft, setDraft] = useState({ ...initial, start_date: isoToLocalInput(initial.start_date), end_date: isoToLocalInput(initial.end_date) });
  const set = (name: keyof Filters) => (e: { target: { value: string } }) => setDraft((d) => ({ ...d, [name]: e.target.value }));

  function submit(event: FormEvent) {
    event.preventDefault();
    onApply({
      entity_type: draft.entity_type,
      entity_id: draft.entity_id.trim(),
      actor_id: draft.actor_id.trim(),
      start_date: localInputToIso(draft.start_date),
      end_date: localInputToIso(draft.end_date),
    });
  }

  function clear() {
    onApply(NO_FILTERS);
  }

  return (
    <form className="filters" onSubmit={submit} aria-label="Filters">
      <div className="field">
        <label htmlFor="f-entity-type">Entity type</label>
        <select id="f-entity-type" value={draft.entity_type} onChange={set('entity_type')}>
          <option value="">Any</option>
          {entityTypes.map((t) => (
            <option key={t.value} value={t.value}>
              {t.display_name}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-entity-id">Entity id</label>
        <input id="f-entity-id" value={draft.entity_id} onChange={set('entity_id')} />
      </div>
      <div className="field">
        <label htmlFor="f-actor">Actor id</label>
        <input id="f-actor" value={draft.actor_id} onChange={set('actor_id')} spellCheck={false} />
      </div>
      <div className="field">
        <label htmlFor="f-from">From ({TIME_ZONE})</label>
        <input id="f-from" type="datetime-local" value={draft.start_date} onChange={set('start_date')} />
      </div>
      <div className="field">
        <label htmlFor="f-to">Until, exclusive ({TIME_ZONE})</label>
        <input id="f-to" type="datetime-local" value={draft.end_date} onChange={set('end_date')} />
      </div>
      <div className="actions">
        <button type="submit">Apply filters</button>
        <button type="button" className="secondary" onClick={clear}>
          Clear
        </button>
      </div>
    </form>
  );
}
