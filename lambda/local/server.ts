import { mkdir, readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import serverless from 'serverless-http';
import { type App, createApp, type Fixtures } from '../app.js';
import { createJwtVerifier } from '../auth/jwt.js';
import { generateTokenSecret } from '../auth/personal-tokens.js';
import { lazyFileParts } from '../files/file-store.js';
import { isLoopbackHost } from '../http/origin.js';
import { buildHandler } from '../http/pipeline.js';
import type { DoersContext, HttpResult } from '../http/request-context.js';
import { createLimitsGuard } from '../limits/limits-guard.js';
import { createNotifyDeps, type NotifyRuntime } from '../notifier-app.js';
import { isOAuthPath } from '../oauth-paths.js';
import { createLogger } from '../observability/logger.js';
import type { Observer } from '../observability/observer.js';
import { createPowertoolsObserver } from '../observability/powertools-observer.js';
import type { Config } from '../platform/config.js';
import { createDocumentClient } from '../platform/dynamodb.js';
import { dataDirKeySource } from '../platform/key-ring.js';
import { createJobDeps, type JobDeps, type LocalWork, localWork } from '../worker-app.js';
import { ensureTables } from './bootstrap.js';
import { registerDevToken, seedDemoWorkspace } from './demo-seed.js';
import { localDevMembers } from './dev-sign-in.js';
import { startEmbeddedDynamo } from './embedded-dynamodb.js';
import { LOCAL_ATTACHMENT_BUCKET, startEmbeddedS3 } from './embedded-s3.js';
import { LOCAL_EMAIL_FROM, startEmbeddedSes } from './embedded-ses.js';
import { createHttpAdapter } from './http-adapter.js';
import { LOCAL_SERVER_FILE, type LocalServerFile } from './local-data.js';
import { type NotifierLoop, startNotifierLoop } from './notifier-loop.js';

export interface LocalServer {
  readonly url: string;
  readonly mcpUrl: string;
  /** The demo owner's dev token; empty when the server was started without the demo (`demo: false`). */
  readonly token: string;
  readonly dynamodbEndpoint: string;
  /** The S3 API attachments go to (the embedded one unless DOERS_S3_ENDPOINT names another). */
  readonly s3Endpoint: string;
  /** The SES v2 API mail goes to (the embedded one unless DOERS_SES_ENDPOINT names another); its sent mail at `<sesUrl>/store`. */
  readonly sesUrl: string;
  readonly app: App;
  /** The notifier over this server's records (lambda/local/notifier-loop.ts): tests drain it and move its minute. */
  readonly notifier: NotifierLoop;
  /** Long work, run beside the server as the worker function runs it in AWS (lambda/worker-app.ts): tests drain it. */
  readonly work: LocalWork;
  close(): Promise<void>;
}

export interface LocalServerOptions {
  /** Conformance fixtures: the test harness only. */
  readonly fixtures?: Fixtures;
  /** Time zone of the demo owner (default: this machine's). */
  readonly timeZone?: string;
  /** Where audit lines and meters go (default: Powertools to stdout, as in Lambda). */
  readonly observer?: Observer;
  /** Log warnings and errors only (the other lines would bury a per-call observer's). */
  readonly quietLogger?: boolean;
  /** Tests only: how the authorization server fetches Client ID Metadata Documents. */
  readonly oauthFetch?: typeof globalThis.fetch;
  /**
   * `false` starts without the demo workspace and its dev token, for a test that makes every
   * workspace it uses (the seed is most of a start); unset, the configuration says
   * (`DOERS_DEMO_SEED`, on by default).
   */
  readonly demo?: boolean;
  /**
   * Tests only: `false` leaves the notifier to the test (drain, minute) instead of polling every two
   * seconds on the real clock; `npm start` always polls.
   */
  readonly notifierPolls?: boolean;
  /** Tests only: long work waits until the test drains it (`server.work.drain()`) instead of starting at once. */
  readonly workHeld?: boolean;
  /** Tests only: the worker's services as the test would have them (a step it times). */
  readonly jobDeps?: (deps: JobDeps) => JobDeps;
  /** Tests only: how host names resolve for webhooks, and how long a receiver has to answer. */
  readonly webhooks?: Pick<NotifyRuntime, 'resolve' | 'webhookTimeoutMs'>;
}

const devTokenFor = async (config: Config): Promise<string> => {
  if (config.devToken) return config.devToken;
  if (config.dataDir === ':memory:') return generateTokenSecret();
  // Kept in the data dir so a restart prints the same token the client was configured with.
  const file = join(config.dataDir, 'dev-token');
  try {
    await writeFile(file, generateTokenSecret(), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return (await readFile(file, 'utf8')).trim();
};

/**
 * The MCP Apps views, built from their sources when first read (lambda/views/build.ts) and kept for
 * the process: `npm start` and the tests need no build step first, and always serve the sources as
 * they are. esbuild is loaded only then; a process that reads no view never loads it.
 */
const buildViewOnDemand = (file: string): Promise<string> =>
  import('../views/build.js').then(({ buildView }) => buildView(file.replace(/\.html$/, '')));

/**
 * `npm start`: the Lambda handler behind node:http on 127.0.0.1, on an embedded DynamoDB (or the
 * one DOERS_DYNAMODB_ENDPOINT names). Start-up is idempotent: tables, demo data and dev token.
 */
export const startLocalServer = async (givenConfig: Config, opts: LocalServerOptions = {}): Promise<LocalServer> => {
  if (givenConfig.dataDir !== ':memory:') await mkdir(givenConfig.dataDir, { recursive: true });
  const [embedded, embeddedS3, embeddedSes] = await Promise.all([
    givenConfig.dynamodbEndpoint ? undefined : startEmbeddedDynamo(givenConfig.dataDir),
    givenConfig.attachments.endpoint ? undefined : startEmbeddedS3(givenConfig.dataDir),
    givenConfig.notifications.sesEndpoint ? undefined : startEmbeddedSes(),
  ]);
  const sesUrl = givenConfig.notifications.sesEndpoint ?? embeddedSes!.url;
  // E-mail works locally out of the box: through the local SES, from a local sender unless one is set.
  const baseConfig: Config = {
    ...givenConfig,
    notifications: {
      ...givenConfig.notifications,
      emailFrom: givenConfig.notifications.emailFrom ?? LOCAL_EMAIL_FROM,
      sesEndpoint: sesUrl,
    },
  };
  const dynamodbEndpoint = baseConfig.dynamodbEndpoint ?? embedded!.endpoint;
  const s3Endpoint = baseConfig.attachments.endpoint ?? embeddedS3!.endpoint;
  // The same S3 code as in Lambda, against the embedded S3 API; loaded on the first attachment.
  const files = lazyFileParts(() =>
    import('../files/s3-files.js').then(({ createS3Files }) =>
      createS3Files({
        bucket: baseConfig.attachments.endpoint ? baseConfig.attachments.bucket : LOCAL_ATTACHMENT_BUCKET,
        endpoint: s3Endpoint,
      }),
    ),
  );

  const db = createDocumentClient({ endpoint: dynamodbEndpoint });
  const logger = createLogger({ quiet: opts.quietLogger ?? false });
  const keys = dataDirKeySource(baseConfig.dataDir);
  const observer = opts.observer ?? createPowertoolsObserver(logger);
  const guard = createLimitsGuard(db, baseConfig, logger);
  // Long work: the worker function's code, run here at once instead of through a queue.
  const made = createJobDeps(baseConfig, db, files);
  const jobDeps = opts.jobDeps ? opts.jobDeps(made) : made;
  const work = localWork(
    () => jobDeps,
    (error) => logger.error('Long work failed', { error }),
    opts.workHeld ?? false,
  );
  const compose = (config: Config): App =>
    createApp({
      config,
      db,
      logger,
      keys,
      observer,
      extraVerifiers: config.jwt ? [createJwtVerifier(config.jwt, logger)] : [],
      guard,
      loopbackHostOnly: true,
      ...(opts.fixtures ? { fixtures: opts.fixtures } : {}),
      views: buildViewOnDemand,
      files,
      work,
    });

  // Everything a first request needs exists before the port opens (tables, demo data, the dev
  // token): a client that connects the moment it can is refused a connection, never a credential.
  await ensureTables(db, baseConfig);
  let token = '';
  if (opts.demo ?? baseConfig.demoSeed === 'on') {
    const seeding = compose(baseConfig);
    await seedDemoWorkspace(seeding.services, opts.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone);
    token = await devTokenFor(baseConfig);
    await registerDevToken(seeding.services, token);
  }

  let handler: ReturnType<typeof buildHandler> | undefined;
  // The authorization server is the stack's second function; one port routes to both, by path, as
  // API Gateway does. Its handler is the Lambda's: oidc-provider behind serverless-http, loaded and
  // built on the first request to one of its paths (as a cold start of its function would be), so
  // a process that never signs anyone in never loads oidc-provider.
  let oauthHandler: (() => Promise<ReturnType<typeof serverless>>) | undefined;
  const server = createHttpAdapter(async (event, context) => {
    if (!oauthHandler || !isOAuthPath(event.rawPath)) return handler!(event, context as DoersContext);
    // The same DNS-rebinding guard as the MCP path's: a page on evil.example resolving to 127.0.0.1
    // must not reach the development sign-in or the account page.
    if (!isLoopbackHost(event.headers.host)) {
      return {
        statusCode: 403,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: 'The local server answers loopback hosts only.',
      };
    }
    return (await (
      await oauthHandler()
    )(event, context)) as HttpResult;
  }, baseConfig.functionTimeoutSeconds * 1000);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(baseConfig.port, '127.0.0.1', () => resolve());
  });
  // The advertised URL needs the port the system gave; the handler is in place before this
  // continuation yields, so no request reaches the adapter without one.
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const config: Config = { ...baseConfig, port, publicUrl: baseConfig.publicUrl.endsWith(':0') ? url : baseConfig.publicUrl };
  const app = compose(config);
  handler = buildHandler(app);
  // Telling people: the stream function's code, fed by a poller over the same records.
  const notifier = startNotifierLoop(
    createNotifyDeps(config, db, { allowLoopback: true, ...(opts.webhooks ?? {}) }),
    db,
    config.tables.workspace,
    {
      poll: opts.notifierPolls !== false,
      onError: (error) => logger.error('The notifier could not tell everyone; it tries again', { error }),
    },
  );
  if (config.builtinAuthorizationServer) {
    let building: Promise<ReturnType<typeof serverless>> | undefined;
    oauthHandler = () => {
      building ??= import('../oauth-app.js')
        .then(({ createOAuthApp }) =>
          createOAuthApp({
            config,
            db,
            keys,
            logger,
            devMembers: localDevMembers(db, config.tables.workspace),
            // The account page's webhooks as the notifier above vets them: loopback receivers allowed here.
            webhookVet: { allowLoopback: true, ...(opts.webhooks?.resolve ? { resolve: opts.webhooks.resolve } : {}) },
            ...(config.signIn?.clientSecret ? { signInClientSecret: config.signIn.clientSecret } : {}),
            ...(opts.oauthFetch ? { fetch: opts.oauthFetch } : {}),
          }),
        )
        .then((oauth) => serverless(oauth.listener));
      // A build that failed (the key ring, the sign-in provider) is said, and tried again by the next request.
      building.catch((error: unknown) => {
        logger.error('The authorization server could not be built', { error });
        building = undefined;
      });
      return building;
    };
  }

  if (config.dataDir !== ':memory:') {
    await writeFile(
      join(config.dataDir, LOCAL_SERVER_FILE),
      JSON.stringify(
        {
          url,
          dynamodbEndpoint,
          pid: process.pid,
          tables: config.tables,
          files: { endpoint: s3Endpoint, bucket: config.attachments.endpoint ? config.attachments.bucket : LOCAL_ATTACHMENT_BUCKET },
        } satisfies LocalServerFile,
        null,
        2,
      ),
    );
  }

  return {
    url,
    mcpUrl: `${url}/mcp`,
    token,
    dynamodbEndpoint,
    s3Endpoint,
    sesUrl,
    app,
    notifier,
    work,
    close: async () => {
      await work.drain();
      await notifier.stop();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      db.destroy();
      await Promise.all([embedded?.close(), embeddedS3?.close(), embeddedSes?.close()]);
    },
  };
};
