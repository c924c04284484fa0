import { FormEvent, useState } from 'react';
import type { EntityType } from '../../../api/client';
import { FilterActions, FilterInput, FilterSelect } from '../../../components/Filters';
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
      <FilterSelect
        id="f-entity-type"
        label="Entity type"
        value={draft.entity_type}
        onChange={set('entity_type')}
        options={entityTypes.map((t) => ({ value: t.value, label: t.display_name }))}
      />
      <FilterInput id="f-entity-id" label="Entity id" value={draft.entity_id} onChange={set('entity_id')} />
      <FilterInput id="f-actor" label="Actor id" value={draft.actor_id} onChange={set('actor_id')} spellCheck={false} />
      <FilterInput id="f-from" label={`From (${TIME_ZONE})`} type="datetime-local" value={draft.start_date} onChange={set('start_date')} />
      <FilterInput id="f-to" label={`Until, exclusive (${TIME_ZONE})`} type="datetime-local" value={draft.end_date} onChange={set('end_date')} />
      <FilterActions submit="Apply filters" onClear={clear} />
    </form>
  );
}
