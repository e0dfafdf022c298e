import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { lazyLoopback } from '../../lambda/local/lazy-loopback.js';

// The port the local S3 and SES stand-ins answer on: open at once, the service behind it started on
// the first connection (lambda/local/lazy-loopback.ts). The service here is an echo server on loopback.

interface Echo {
  readonly port: number;
  readonly server: Server;
  /** Connections the echo server has open now. */
  connections(): Promise<number>;
}

const startEcho = async (): Promise<Echo> => {
  const server = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    server,
    connections: () => new Promise((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n)))),
  };
};

const stopEcho = (echo: Echo) => new Promise<void>((resolve) => echo.server.close(() => resolve()));

const dial = async (port: number): Promise<Socket> => {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  return socket;
};

const echoed = async (socket: Socket, text: string): Promise<string> => {
  socket.write(text);
  const [chunk] = (await once(socket, 'data')) as [Buffer];
  return chunk.toString();
};

/** A start that waits until the test lets it go, then starts an echo server. */
const heldStart = () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let echo: Echo | undefined;
  return {
    start: async () => {
      await held;
      echo = await startEcho();
      return echo;
    },
    release: () => release(),
    /** The echo server, once started. */
    echo: () => echo!,
  };
};

describe('a lazy loopback port', () => {
  test('starts nothing until the first connection, then starts the service once and forwards every connection to it', async () => {
    // Arrange
    let starts = 0;
    const echoes: Echo[] = [];
    const port = await lazyLoopback(
      'The echo',
      async () => {
        starts++;
        const echo = await startEcho();
        echoes.push(echo);
        return echo;
      },
      stopEcho,
    );
    assert.equal(starts, 0);

    // Act
    const [a, b] = await Promise.all([dial(port.port), dial(port.port)]);
    const answers = await Promise.all([echoed(a, 'one'), echoed(b, 'two')]);

    // Assert
    assert.deepEqual(answers, ['one', 'two']);
    assert.equal(starts, 1);
    a.destroy();
    b.destroy();
    await port.close();
    assert.equal(echoes[0]!.server.listening, false, 'close() stops the service it started');
  });

  test('a client that resets while the service starts is dropped: no uncaught error, no connection left upstream', async () => {
    // Arrange: a start held until the test lets it go
    const held = heldStart();
    const port = await lazyLoopback('The echo', held.start, stopEcho);

    // Act: the client sends, then goes away mid-start, abruptly; the port sees the reset before the start ends
    const client = await dial(port.port);
    client.write('lost');
    client.resetAndDestroy();
    await once(client, 'close');
    await new Promise((resolve) => setTimeout(resolve, 50));
    held.release();
    const after = await dial(port.port);
    const answer = await echoed(after, 'still here');

    // Assert
    assert.equal(answer, 'still here');
    assert.equal(await held.echo().connections(), 1, 'only the live client is connected upstream');
    after.destroy();
    await port.close();
  });

  test('a start that fails fails its connections and warns; the next connection starts it again', async () => {
    // Arrange
    let starts = 0;
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    const port = await lazyLoopback(
      'The echo',
      async () => {
        starts++;
        if (starts === 1) throw new Error('no port for you');
        return startEcho();
      },
      stopEcho,
    );

    try {
      // Act
      const first = await dial(port.port);
      await once(first, 'close');
      const second = await dial(port.port);
      const answer = await echoed(second, 'again');

      // Assert
      assert.equal(answer, 'again');
      assert.equal(starts, 2);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings, ['The echo could not start: no port for you']);
      second.destroy();
    } finally {
      process.off('warning', onWarning);
      await port.close();
    }
  });

  test('closed while the service starts: the waiting client is dropped and nothing is left connected upstream', async () => {
    // Arrange
    const held = heldStart();
    /** The connections the service had when it was stopped. */
    let stoppedWith = -1;
    const port = await lazyLoopback('The echo', held.start, async (e) => {
      stoppedWith = await e.connections();
      await stopEcho(e);
    });
    const client = await dial(port.port);
    client.on('error', () => undefined);
    const clientClosed = once(client, 'close');

    // Act
    const closing = port.close();
    held.release();
    await closing;

    // Assert: the client was let go, and the service had no connection for it when it was stopped
    await clientClosed;
    assert.equal(stoppedWith, 0);
  });
});
