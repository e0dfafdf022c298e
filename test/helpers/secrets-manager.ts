import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SecretRead {
  /** `x-amz-target`: the operation the SDK asked for. */
  readonly target: string | undefined;
  /** The SigV4 `Authorization` header: names the access key the request was signed with. */
  readonly authorization: string;
  readonly stage: unknown;
}

export interface SecretsManagerStandIn {
  /** For `AWS_ENDPOINT_URL_SECRETS_MANAGER`. */
  readonly url: string;
  readonly reads: SecretRead[];
  /** While true, every read gets a 500 InternalServiceError (the SDK retries, then gives up). */
  failing: boolean;
  close(): Promise<void>;
}

const readBody = async (req: IncomingMessage): Promise<string> => {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
};

/**
 * Secrets Manager's GetSecretValue on loopback, in its JSON protocol, for the bundled function: the
 * SDK in the bundle signs and sends exactly what it would send to AWS. AWSCURRENT holds `{"seed"}`,
 * AWSPREVIOUS does not exist (a secret never rotated).
 */
export const startSecretsManager = (seed: string): Promise<SecretsManagerStandIn> =>
  new Promise((ok) => {
    const reads: SecretRead[] = [];
    const state = { failing: false };
    const server = createServer(async (req, res) => {
      const body = JSON.parse(await readBody(req)) as { VersionStage?: string };
      reads.push({
        target: req.headers['x-amz-target'] as string | undefined,
        authorization: req.headers.authorization ?? '',
        stage: body.VersionStage,
      });
      res.setHeader('content-type', 'application/x-amz-json-1.1');
      if (state.failing) {
        res.statusCode = 500;
        res.end(JSON.stringify({ __type: 'InternalServiceError', message: 'An error occurred on the server side.' }));
        return;
      }
      if (body.VersionStage === 'AWSCURRENT') {
        res.end(
          JSON.stringify({
            ARN: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:doers',
            Name: 'doers',
            SecretString: JSON.stringify({ seed }),
            VersionStages: ['AWSCURRENT'],
          }),
        );
        return;
      }
      res.statusCode = 400;
      res.end(
        JSON.stringify({
          __type: 'ResourceNotFoundException',
          message: "Secrets Manager can't find the specified secret value for staging label: AWSPREVIOUS",
        }),
      );
    });
    server.listen(0, '127.0.0.1', () =>
      ok(
        Object.assign(state, {
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          reads,
          close: () => new Promise<void>((done) => server.close(() => done())),
        }),
      ),
    );
  });
