/**
 * A one-line progress indicator for long CLI work (a big school's sync, a roster export). Shown only
 * when stderr is a terminal; in logs and pipes it writes nothing. `describe` is read every 250 ms.
 */
export async function withProgress<T>(
  label: string,
  describe: () => string,
  work: () => Promise<T>,
  stream: NodeJS.WriteStream = process.stderr,
): Promise<T> {
  if (!stream.isTTY) return work();
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  const started = Date.now();
  let frame = 0;
  const draw = () => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const line = `${frames[frame++ % frames.length]} ${label} ${seconds}s ${describe()}`;
    stream.write(`\r\x1b[2K${line.slice(0, Math.max(20, (stream.columns ?? 80) - 1))}`);
  };
  draw();
  const timer = setInterval(draw, 250);
  try {
    return await work();
  } finally {
    clearInterval(timer);
    stream.write('\r\x1b[2K');
  }
}
