import { FrameReader, FrameWriter } from './sandbox-protocol';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('FrameWriter', () => {
  it('writes the frames sent by separate callbacks of one turn of the event loop in one write, after them', async () => {
    const writes: string[] = [];
    const writer = new FrameWriter((text) => writes.push(text));
    // Two timers due together fire in the same timers phase, as the reads of two requests do in one poll phase.
    await new Promise<void>((resolve) => {
      setTimeout(() => writer.send('r\t1\ta'), 1);
      setTimeout(() => {
        writer.send('r\t2\tb');
        expect(writes).toEqual([]);
        resolve();
      }, 1);
    });
    await turn();
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
  it('splits what arrives into lines, whatever the chunks', () => {
    const frames: string[] = [];
    const reader = new FrameReader(100, (frame) => frames.push(frame), () => frames.push('overflow'));
    reader.push('d\t1\tx\nd\t2');
    reader.push('\ty\nd\t3\t');
    reader.push('z\n');
    expect(frames).toEqual(['d\t1\tx', 'd\t2\ty', 'd\t3\tz']);
  });

  it('stops at a frame longer than its limit', () => {
    const frames: string[] = [];
    const reader = new FrameReader(8, (frame) => frames.push(frame), () => frames.push('overflow'));
    reader.push('0123');
    reader.push('456789');
    reader.push('\nd\t1\n');
    expect(frames).toEqual(['overflow']);
  });
});
