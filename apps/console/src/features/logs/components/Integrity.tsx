import { TIME_ZONE, timeFormat } from '../../../format';
import { useLatestCheckpoint, useVerifyTrail } from '../api/logs';

/** The last signed checkpoint, and *Verify the trail* in the browser with what it found. */
export function Integrity() {
  const latest = useLatestCheckpoint();
  const verify = useVerifyTrail();
  const result = verify.isPending ? { running: true as const } : verify.data;

  return (
    <section className="integrity" aria-labelledby="integrity-title">
      <h2 id="integrity-title">Integrity</h2>
      <p data-testid="last-checkpoint">
        {latest === undefined
          ? 'Loading the last signed checkpoint…'
          : latest === null
            ? 'No signed checkpoint yet.'
            : `Last signed checkpoint: position ${latest.position}, signed ${timeFormat.format(new Date(latest.signed_at))} (${TIME_ZONE}), key ${latest.key_id}.`}
      </p>
      <button type="button" className="secondary" onClick={() => verify.mutate()} disabled={verify.isPending}>
        Verify the trail
      </button>
      <p role="status" data-testid="verification">
        {result === undefined
          ? ''
          : 'running' in result
            ? 'Verifying…'
            : result.ok
              ? `Verified: ${result.logs} logs chained without a gap${result.anchor ? ` from the retention anchor at position ${result.anchor} (older logs removed by the tenant's retention period)` : ''}, ${result.checkpoints} checkpoint signatures valid, signed up to position ${result.lastSigned}${result.unsigned ? ` (${result.unsigned} newer logs not signed yet)` : ''}. Checked against the key this service serves; for an independent check, run gatehouse logs verify with a key obtained out of band.`
              : `Verification failed: ${result.problem}`}
      </p>
    </section>
  );
}
