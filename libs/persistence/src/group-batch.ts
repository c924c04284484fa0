/**
 * Group commit for statements that many concurrent requests issue alike (a token read, a read's audit row): the
 * first item is sent at once; items arriving while `maxInFlight` batches are out wait and go together as one
 * statement when a batch comes back. An idle service pays nothing (a lone item is a batch of one, sent on the
 * next microtask); a busy one pays one round trip, and one write to the socket, for many requests. Each caller's
 * promise settles with its own result, after the statement that carried it has completed (a committed INSERT is
 * durable for every row it holds); a failed statement fails every item it carried.
 */
export class GroupBatch<I, O> {
  private pending: Array<{ item: I; resolve: (value: O) => void; reject: (error: unknown) => void }> = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    /** Runs one batch; answers one result per item, in the items' order. */
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 500,
    private readonly maxInFlight = 2,
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.pending.length === 0) return;
    this.scheduled = true;
    // Items added in the same tick (a request's several reads, or requests parsed from one socket read) join.
    queueMicrotask(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.inFlight >= this.maxInFlight || this.pending.length === 0) return;
    const batch = this.pending.splice(0, this.maxBatch);
    this.inFlight++;
    let run: Promise<O[]>;
    try {
      run = this.run(batch.map((entry) => entry.item));
    } catch (error) {
      run = Promise.reject(error);
    }
    run
      .then(
        (results) => batch.forEach((entry, i) => entry.resolve(results[i] as O)),
        (error: unknown) => batch.forEach((entry) => entry.reject(error)),
      )
      .finally(() => {
        this.inFlight--;
        this.schedule();
      });
  }
}
