import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import { LOCAL_ATTACHMENT_BUCKET } from '../../lambda/local/embedded-s3.js';
import { type LocalServer, startLocalServer } from '../../lambda/local/server.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { MCP_CHUNKS_DIR, S3_FILES_OUTFILE, VIEWS_DIR } from '../../lib/bundling.js';
import {
  BUNDLE_ACCESS_KEY,
  bundleLambda,
  invokeFresh,
  type LambdaBundle,
  lambdaEnv,
  NODE22,
  resourceReadEvent,
  startInstance,
  toolCallEvent,
} from '../helpers/lambda-bundle.js';
import { RecordingObserver } from '../helpers/recording-observer.js';
import { type SecretsManagerStandIn, startSecretsManager } from '../helpers/secrets-manager.js';
import { synth } from '../infra/synth.js';

// The artifact Lambda runs: lambda/handler.ts bundled as the stack bundles it, imported by a fresh
// Node process with the environment Lambda gives it (role credentials in AWS_* variables, the stack's
// DOERS_* names). DynamoDB is the embedded one and Secrets Manager a loopback stand-in that speaks
// its JSON protocol, both reached through the SDK's own AWS_ENDPOINT_URL_* settings.

/**
 * Guards lib/bundling.ts and the Lambda code's zod/mini: 617 KB before the aliases, 480 KB with them,
 * 429 KB with zod/mini instead of classic zod (the SDK is most of it), 435 KB with the built-in
 * authorization server's token check, 503 KB with the activity record, undo, the views' links, task
 * keys and the bulk tools, 476 KB with the SDK's event-stream codec and endpoint cache left out
 * (lib/bundling.ts), 493 KB with the one task writer, its typed refusals and the credentials that follow
 * their member, 512 KB with layout 2's lists, counts and word entries (the cold start measured beside
 * it in bench/results.md), 565 KB with chrono-node's English parser for dates in words, 622 KB with
 * rrule for repeat rules (both evaluated on first use only: the cold start of me_get did not move
 * beyond its spread, docs/testing.md), 644 KB with subtasks and workflow statuses (our own code, no
 * new library), 669 KB with project statuses and attachments (our own code: the S3 client and the type
 * sniffer are a bundle of their own, 377 KB, loaded on the first attachment; the cold start of a call
 * without one is in docs/testing.md), 721 KB with the query language (its generated parser 9.6 KB,
 * its planner and checks 12 KB) and saved views, 760 KB with telling people (the inbox's store and
 * tools 9 KB, the webhooks' store 8 KB, reminders in words 4 KB, mentions 2 KB; the SES client and the
 * webhook sender are the notifier's, not in this bundle), 772 KB with custom fields (their model, the
 * query's custom terms, the surface's reading of values: 12 KB), 837 KB with long work as tasks (the SQS
 * client it is handed over with among them). Since then the bundle is split (lib/build-mcp-bundle.ts): what a cold start loads
 * (`index.mjs` and the chunks it imports statically) 695 KB, the main file itself 557 KB, all the
 * files 858 KB; chrono-node, rrule, the SDK's user-agent parser and the SQS client are chunks read on
 * first use. Since the tools are listed from the build's listing and each tool file is a chunk loaded
 * on its tool's first call (lambda/workspace/surface/catalog.ts), and the worker's side of long work
 * is out of the MCP function's start: the main file 160 KB, what a cold start loads 611 KB
 * (docs/testing.md, "Benchmarks").
 */
const MAX_START_BYTES = 640 * 1024;
/** The main file alone (the goal: 400 KB). */
const MAX_MAIN_BYTES = 400 * 1024;
/** The modules a cold start must not load: each is a chunk of its own, read when a call first needs it. */
const LOADED_ON_FIRST_USE =
  /node_modules\/(chrono-node|rrule|bowser|@aws-sdk\/client-sqs|csv-parse)\/|lambda\/workspace\/(surface\/tools\/|transfer\/|tasks\/task-writer\.ts)/;

describe('the Lambda bundle', () => {
  let work: string;
  let bundle: LambdaBundle;
  let seeded: LocalServer;
  let secrets: SecretsManagerStandIn;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'doers-bundle-'));
    const dataDir = join(work, 'data');
    seeded = await startLocalServer(loadConfig({ PORT: '0', DOERS_DATA_DIR: dataDir }), {
      timeZone: 'UTC',
      observer: new RecordingObserver(),
      notifierPolls: false,
    });
    const { seed } = JSON.parse(await readFile(join(dataDir, 'keys.json'), 'utf8')) as { seed: string };
    secrets = await startSecretsManager(seed);
    bundle = await bundleLambda('lambda/handler.ts', join(work, 'out'), { views: true, s3Files: true });
  });

  after(async () => {
    await seeded.close();
    await secrets.close();
    await rm(work, { recursive: true, force: true });
  });

  test('is the very file the stack deploys: the same bytes as the MCP function asset cdk synth stages', async () => {
    // Arrange: the stack with an external issuer has one function, the MCP one (its bundle does not
    // depend on the issuer); synthesis runs NodejsFunction's own esbuild command and the views hook.
    const { outdir } = synth(
      {
        'doers:jwtIssuer': 'https://login.example.com/realms/doers',
        'doers:jwksUri': 'https://login.example.com/realms/doers/protocol/openid-connect/certs',
        'doers:jwtAudience': 'doers-mcp',
      },
      { bundle: true },
    );
    // The MCP function's asset is the one with the views beside its bundle (the notifier's and the minute function's have none).
    const asset = readdirSync(outdir)
      .map((d) => join(outdir, d))
      .find(
        (d) =>
          d.includes('asset.') && statSync(d).isDirectory() && readdirSync(d).includes('index.mjs') && readdirSync(d).includes('views'),
      )!;

    // Act: every JavaScript file of the split bundle (the S3 module's own bundle apart)
    const jsOf = (dir: string, under = ''): string[] =>
      readdirSync(join(dir, under), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() && e.name !== VIEWS_DIR
          ? jsOf(dir, join(under, e.name))
          : e.isFile() && e.name.endsWith('.mjs') && !(under === '' && e.name === S3_FILES_OUTFILE)
            ? [join(under, e.name)]
            : [],
      );
    const stagedFiles = jsOf(asset).sort();

    // Assert
    assert.deepEqual(stagedFiles, bundle.files, 'the stack stages other files than the helper builds');
    assert.ok(
      stagedFiles.some((f) => f.startsWith(`${MCP_CHUNKS_DIR}/`)),
      'the asset holds no chunks: the bundle is not split',
    );
    for (const f of stagedFiles) {
      const [staged, built] = await Promise.all([readFile(join(asset, f)), readFile(join(work, 'out', f))]);
      assert.ok(staged.equals(built), `the helper's ${f} (${built.length} B) differs from the stack's (${staged.length} B)`);
    }
    assert.deepEqual(readdirSync(join(asset, 'views')).sort(), readdirSync(join(work, 'out', 'views')).sort());
    const [stagedS3, builtS3] = await Promise.all([readFile(join(asset, S3_FILES_OUTFILE)), readFile(join(work, 'out', S3_FILES_OUTFILE))]);
    assert.ok(stagedS3.equals(builtS3), "the S3 module's bundle differs from the one the stack stages");
  });

  test('stays under its size budget and carries neither the SDK credential chain nor its STS/SSO clients, event streams or endpoint cache', () => {
    assert.ok(
      bundle.startBytes <= MAX_START_BYTES,
      `a cold start loads ${Math.round(bundle.startBytes / 1024)} KB (main file ${Math.round(bundle.bytes / 1024)} KB), budget ${MAX_START_BYTES / 1024} KB`,
    );
    assert.ok(bundle.bytes <= MAX_MAIN_BYTES, `the main file is ${Math.round(bundle.bytes / 1024)} KB, budget ${MAX_MAIN_BYTES / 1024} KB`);
    // What no first call runs stays out of what a cold start loads.
    assert.deepEqual(
      bundle.startInputs.filter((f) => LOADED_ON_FIRST_USE.test(f)),
      [],
    );
    assert.ok(
      bundle.inputs.some((f) => /node_modules\/chrono-node\//.test(f)),
      'chrono-node is in none of the chunks',
    );
    const carried = bundle.inputs.filter((f) =>
      /credential-provider-(node|ini|sso|process|web-identity|login)|nested-clients|submodules\/event-streams|endpoint-cache\/|mnemonist/.test(
        f,
      ),
    );
    assert.deepEqual(carried, []);
    // Attachments' S3 client and type sniffer are a bundle of their own, loaded on the first attachment.
    assert.deepEqual(
      bundle.inputs.filter((f) => /client-s3|file-type|lambda\/files\/s3-files/.test(f)),
      [],
    );
  });

  test('a fresh process answers tools/call with the role credentials from the environment and the secret from Secrets Manager, without loading undici', async () => {
    // Arrange: limits on, as the stack sets them, so the admission write goes through the bundle too
    const env = lambdaEnv({
      dynamodbEndpoint: seeded.dynamodbEndpoint,
      secretsManagerUrl: secrets.url,
      env: { DOERS_RATE_LIMIT_CALLS: '120', DOERS_MAX_CONCURRENT_CALLS: '4' },
    });

    // Act
    const { res, undici } = await invokeFresh(bundle, toolCallEvent(seeded.token, 'me_get'), env);

    // Assert
    assert.equal(res.statusCode, 200, res.body);
    const body = JSON.parse(res.body) as {
      result: { isError: boolean; structuredContent: { userId: string; email: string; role: string } };
    };
    assert.equal(body.result.isError, false);
    const { userId, email, role } = body.result.structuredContent;
    assert.deepEqual({ userId, email, role }, { userId: DEMO_OWNER.userId, email: DEMO_OWNER.email, role: 'owner' });
    assert.deepEqual(secrets.reads.map((r) => r.stage).sort(), ['AWSCURRENT', 'AWSPREVIOUS']);
    for (const read of secrets.reads) {
      assert.equal(read.target, 'secretsmanager.GetSecretValue');
      assert.match(
        read.authorization,
        new RegExp(`^AWS4-HMAC-SHA256 Credential=${BUNDLE_ACCESS_KEY}/\\d{8}/us-east-1/secretsmanager/aws4_request`),
      );
    }
    assert.equal(undici, false, 'importing the bundle loaded undici');
  });

  test("an invocation's audit line carries its X-Ray trace id, as active tracing gives it", async () => {
    // Arrange: what Lambda puts in the environment of a traced invocation
    const root = '1-5759e988-bd862e3fe1be46a994272793';
    const env = lambdaEnv({
      dynamodbEndpoint: seeded.dynamodbEndpoint,
      secretsManagerUrl: secrets.url,
      env: { _X_AMZN_TRACE_ID: `Root=${root};Parent=53995c3f42cd8ad8;Sampled=1` },
    });
    const instance = await startInstance(bundle, env, NODE22);

    try {
      // Act
      const { res } = await instance.invoke(toolCallEvent(seeded.token, 'me_get'));

      // Assert
      assert.equal(res.statusCode, 200, res.body);
      const audit = instance.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.audit === 'tool_call');
      assert.ok(audit, instance.logs.join('\n'));
      assert.equal(audit.xray_trace_id, root);
      assert.equal(audit.tool, 'me_get');
    } finally {
      instance.close();
    }
  });

  test('a stack formatted inside the bundle names lambda/*.ts lines, with and without --enable-source-maps', async () => {
    // Arrange: an event whose headers, when the function first reads them, record the stack there.
    const driver = join(work, 'out', 'stack-driver.mjs');
    await writeFile(
      driver,
      `const { handler } = await import(process.argv[2]);
const event = JSON.parse(process.argv[3]);
const headers = event.headers;
let stack;
Object.defineProperty(event, 'headers', { get() { stack ??= new Error('probe').stack; return headers; } });
await handler(event, { awsRequestId: 'bundle', getRemainingTimeInMillis: () => 15000 });
process.stdout.write(JSON.stringify({ stack }) + '\\n', () => process.exit(0));`,
    );
    const stackOf = (nodeOptions: string) =>
      new Promise<string>((ok, fail) => {
        const env = {
          ...lambdaEnv({ dynamodbEndpoint: seeded.dynamodbEndpoint, secretsManagerUrl: secrets.url }),
          NODE_OPTIONS: nodeOptions,
        };
        const child = spawn(NODE22, [driver, bundle.file, JSON.stringify(toolCallEvent(seeded.token, 'me_get'))], { env });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.once('exit', () => {
          const line = out.split('\n').find((l) => l.startsWith('{"stack"'));
          line ? ok((JSON.parse(line) as { stack: string }).stack) : fail(new Error(out));
        });
      });

    // Act
    const [lazy, node] = await Promise.all([stackOf(''), stackOf('--enable-source-maps')]);

    // Assert
    for (const stack of [lazy, node]) {
      assert.match(stack, /lambda\/http\/[\w-]+\.ts:\d+:\d+/, stack);
      assert.doesNotMatch(stack, /index\.mjs:1:\d+/, stack);
    }
  });

  test("a frame in one of the bundle's chunks is mapped through that chunk's own source map", async () => {
    // Arrange: a position in chrono-node's chunk that its map places in chrono-node's sources
    const chunk = bundle.files.find(
      (f) => f.startsWith(`${MCP_CHUNKS_DIR}/`) && /node_modules\/chrono-node\//.test(readFileSync(join(work, 'out', `${f}.map`), 'utf8')),
    )!;
    const file = join(work, 'out', chunk);
    const map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
    const lines = readFileSync(file, 'utf8').split('\n');
    let at: { line: number; column: number } | undefined;
    for (let line = 0; line < lines.length && !at; line++)
      for (let column = 0; column < lines[line]!.length && !at; column += 97)
        if ((map.findEntry(line, column) as { originalSource?: string }).originalSource?.includes('chrono-node')) at = { line, column };
    assert.ok(at, `no position of ${chunk} maps into chrono-node`);
    // The handler's module installs the mapping; a call site in the chunk is then formatted as V8 would pass it.
    const driver = join(work, 'out', 'chunk-frame-driver.mjs');
    await writeFile(
      driver,
      `await import(process.argv[2]);
const site = { getFileName: () => process.argv[3], getLineNumber: () => ${at.line + 1}, getColumnNumber: () => ${at.column + 1}, isAsync: () => false, getFunctionName: () => null, toString: () => 'unmapped' };
process.stdout.write(JSON.stringify({ stack: Error.prepareStackTrace(new Error('probe'), [site]) }) + '\\n', () => process.exit(0));`,
    );
    const env = lambdaEnv({ dynamodbEndpoint: seeded.dynamodbEndpoint, secretsManagerUrl: secrets.url });

    // Act
    const stack = await new Promise<string>((ok, fail) => {
      const child = spawn(NODE22, [driver, bundle.file, pathToFileURL(file).href], { env });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.once('exit', () => {
        const line = out.split('\n').find((l) => l.startsWith('{"stack"'));
        line ? ok((JSON.parse(line) as { stack: string }).stack) : fail(new Error(out));
      });
    });

    // Assert
    assert.match(stack, /node_modules\/chrono-node\/[^:]+:\d+:\d+/, stack);
    assert.doesNotMatch(stack, /unmapped/, stack);
  });

  test('a fresh process reads a view from the HTML shipped beside the bundle, which holds none of the views itself', async () => {
    // Arrange
    const env = lambdaEnv({ dynamodbEndpoint: seeded.dynamodbEndpoint, secretsManagerUrl: secrets.url });
    const shipped = await readFile(join(work, 'out', 'views', 'agenda.html'), 'utf8');
    const code = await readFile(bundle.file, 'utf8');

    // Act
    const { res } = await invokeFresh(bundle, resourceReadEvent(seeded.token, 'ui://doers/agenda'), env);

    // Assert
    assert.equal(res.statusCode, 200, res.body);
    const { result } = JSON.parse(res.body) as { result: { contents: { mimeType: string; text: string }[]; ttlMs: number } };
    assert.equal(result.contents[0]!.mimeType, 'text/html;profile=mcp-app');
    assert.equal(result.contents[0]!.text, shipped);
    assert.equal(result.ttlMs, 3_600_000);
    // Only the table of which tool shows which view is server code; no browser source, no HTML, no ext-apps.
    assert.deepEqual(
      bundle.inputs.filter((f) => f.includes('lambda/views/') || f.includes('ext-apps')),
      ['lambda/views/links.ts'],
    );
    assert.equal(code.includes('data-version'), false);
  });

  test('Secrets Manager down at cold start: 503 + Retry-After without internals, and the first request after it recovers succeeds', async () => {
    // Arrange: the secret cannot be read during init nor on the first request
    secrets.failing = true;
    const instance = await startInstance(bundle, lambdaEnv({ dynamodbEndpoint: seeded.dynamodbEndpoint, secretsManagerUrl: secrets.url }));
    try {
      // Act
      const down = await instance.invoke(toolCallEvent(seeded.token, 'me_get'));
      secrets.failing = false;
      const back = await instance.invoke(toolCallEvent(seeded.token, 'me_get'));

      // Assert
      assert.equal(down.res.statusCode, 503, down.res.body);
      assert.equal(down.res.headers['retry-after'], '2');
      assert.deepEqual(JSON.parse(down.res.body), {
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32000, message: 'The service cannot check this request right now; retry shortly' },
      });
      assert.equal(back.res.statusCode, 200, back.res.body);
      assert.equal(JSON.parse(back.res.body).result.isError, false);
    } finally {
      secrets.failing = false;
      instance.close();
    }
  });

  test('a fresh process attaches a file through the S3 module beside the bundle and reads it back, against the embedded S3 API', async () => {
    // Arrange: the seeded server's embedded S3 API stands in for the bucket
    const env = lambdaEnv({
      dynamodbEndpoint: seeded.dynamodbEndpoint,
      secretsManagerUrl: secrets.url,
      env: { DOERS_S3_ENDPOINT: seeded.s3Endpoint, DOERS_ATTACHMENT_BUCKET: LOCAL_ATTACHMENT_BUCKET },
    });
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

    // Act
    const added = await invokeFresh(
      bundle,
      toolCallEvent(seeded.token, 'attachment_add', { taskId: 'DEMO-1', name: 'quote.png', content: png.toString('base64') }),
      env,
    );
    const { attachmentId, type } = (JSON.parse(added.res.body) as { result: { structuredContent: { attachmentId: string; type: string } } })
      .result.structuredContent;
    const read = await invokeFresh(bundle, resourceReadEvent(seeded.token, `doers://attachments/${attachmentId}`), env);

    // Assert
    assert.equal(added.res.statusCode, 200, added.res.body);
    assert.equal(type, 'image/png', 'sniffed by file-type inside the S3 module');
    const { result } = JSON.parse(read.res.body) as { result: { contents: { blob: string; mimeType: string }[] } };
    assert.equal(result.contents[0]!.mimeType, 'image/png');
    assert.deepEqual(Buffer.from(result.contents[0]!.blob, 'base64'), png);
  });
});
