import { createRequire } from 'node:module';
import { connect, createServer, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);

export interface EmbeddedSes {
  /** The SES v2 API; in a browser, the mail it was sent (as JSON at `/store`). */
  readonly url: string;
  close(): Promise<void>;
}

/** The sender the local server's mail comes from when DOERS_EMAIL_FROM is unset (a valid address on a reserved name). */
export const LOCAL_EMAIL_FROM = 'doers@localhost.localdomain';

/** aws-ses-v2-local in a thread of its own, listening on a loopback port the system picks. */
const startWorker = async (): Promise<{ readonly port: number; readonly worker: Worker }> => {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     require(${JSON.stringify(require.resolve('aws-ses-v2-local'))})
       .default({ host: '127.0.0.1', port: 0 })
       .then((server) => parentPort.postMessage(server.address().port));`,
    // Plain JavaScript: without the parent's flags the thread loads no TypeScript loader.
    { eval: true, execArgv: [] },
  );
  try {
    const port = await new Promise<number>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`The local SES stopped before it listened (exit code ${code})`)));
    });
    return { port, worker };
  } catch (err) {
    await worker.terminate();
    throw err;
  }
};

/**
 * The SES v2 API on loopback, for `npm start` and the tests: aws-ses-v2-local answers the API the
 * e-mail sender (lambda/delivery/email-sender.ts) speaks, keeps what it is sent in memory and shows
 * it in a browser at its URL.
 *
 * Loading it (express, mailparser, nodemailer) is about 180 ms of synchronous work, which measured
 * as 250 ms more for every local server's start even on a thread of its own, while most local
 * servers (each test file's) send no mail. So the port opens at once and forwards connections,
 * and the library is started on the first connection, in a worker thread: its store (one per
 * module instance) is then the thread's, so two local servers in one process keep their mail apart,
 * and the local server's thread is not blocked while it loads.
 */
export const startEmbeddedSes = async (): Promise<EmbeddedSes> => {
  let upstream: Promise<{ readonly port: number; readonly worker: Worker }> | undefined;
  const open = new Set<Socket>();
  const track = (socket: Socket): Socket => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    return socket;
  };
  const front = createServer((client) => {
    track(client);
    // Bytes that arrive meanwhile wait in the socket: a stream flows only once piped.
    upstream ??= startWorker().catch((err: unknown) => {
      upstream = undefined; // the next connection tries again
      throw err;
    });
    upstream.then(
      ({ port }) => {
        const server = track(connect(port, '127.0.0.1'));
        server.once('error', () => client.destroy());
        client.once('error', () => server.destroy());
        client.pipe(server).pipe(client);
      },
      () => client.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = front.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => front.close(() => resolve()));
      for (const socket of open) socket.destroy();
      await closed;
      // Ending the thread closes its sockets.
      const started = await upstream?.catch(() => undefined);
      await started?.worker.terminate();
    },
  };
};
