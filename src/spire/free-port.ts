// Free TCP ports on 127.0.0.1 for SPIRE's listeners, which take a fixed port in their config. The
// kernel picks the port; it is released before SPIRE binds it, so a start that loses the race is
// reported by SPIRE itself ("address already in use") and the caller may retry.
import { createServer } from 'node:net';

/** `n` distinct free ports (held open together so the kernel cannot hand out one twice). */
export async function freeLoopbackPorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => {
      const srv = createServer();
      srv.unref();
      return new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(0, '127.0.0.1', () => resolve(srv));
      });
    }),
  );
  const ports = servers.map((s) => {
    const a = s.address();
    return typeof a === 'object' && a ? a.port : 0;
  });
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  return ports;
}
