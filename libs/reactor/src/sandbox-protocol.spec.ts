import { FrameReader, FrameWriter } from './sandbox-protocol';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('FrameWriter', () => {
  it('writes the frames sent by separate callbacks of one turn of the event loop in one write, after them', async () => {
    const writes: string[] = [];
    const writer = new FrameWriter((text) => writes.push(text));
    // Immediates queued in one turn run in the same check phase, each a callback of its own, as the reads of two
    // requests do in one poll phase; what either schedules with setImmediate runs in the next turn.
    let seenBySecond: string[] | null = null;
    await new Promise<void>((resolve) => {
      setImmediate(() => writer.send('r\t1\ta'));
      setImmediate(() => {
        writer.send('r\t2\tb');
        seenBySecond = [...writes];
        resolve();
      });
    });
    await turn();
    expect(seenBySecond).toEqual([]);
    expect(writes).toEqual(['r\t1\ta\nr\t2\tb\n']);
  });

  it('writes again in a later turn, and nothing once stopped', async () => {
    const writes: string[] = [];
    const writer = new FrameWriter((text) => writes.push(text));
    writer.send('a');
    await turn();
    writer.send('b');
    await turn();
    writer.send('c');
    writer.stop();
    writer.send('d');
    await turn();
    expect(writes).toEqual(['a\n', 'b\n']);
  });
});

describe('FrameReader', () => {
  it.each([
    {
      name: 'splits what arrives into lines, whatever the chunks',
      limit: 100,
      chunks: ['d\t1\tx\nd\t2', '\ty\nd\t3\t', 'z\n'],
      frames: ['d\t1\tx', 'd\t2\ty', 'd\t3\tz'],
    },
    { name: 'stops at a frame longer than its limit', limit: 8, chunks: ['0123', '456789', '\nd\t1\n'], frames: ['overflow'] },
  ])('$name', ({ limit, chunks, frames }) => {
    const seen: string[] = [];
    const reader = new FrameReader(
      limit,
      (frame) => seen.push(frame),
      () => seen.push('overflow'),
    );
    for (const chunk of chunks) reader.push(chunk);
    expect(seen).toEqual(frames);
  });
});
