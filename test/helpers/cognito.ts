import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CognitoRequest {
  /** `x-amz-target` without the service prefix: `AdminCreateUser`, `AdminDisableUser`, … */
  readonly operation: string;
  /** The SigV4 `Authorization` header: names the access key the request was signed with. */
  readonly authorization: string;
  readonly body: Record<string, unknown>;
}

/** An error answer in the JSON 1.1 protocol: `__type` becomes the SDK exception's `name`. */
export interface CognitoFault {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

export interface CognitoStandIn {
  /** For `AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER`. */
  readonly url: string;
  readonly requests: CognitoRequest[];
  /** Usernames (as sent) that exist in the pool: AdminCreateUser of one answers UsernameExistsException. */
  readonly users: Set<string>;
  /** While set, every request gets this answer instead. */
  failing: CognitoFault | undefined;
  close(): Promise<void>;
}

const TARGET_PREFIX = 'AWSCognitoIdentityProviderService.';

const readBody = async (req: IncomingMessage): Promise<string> => {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
};

/**
 * The Cognito user pool operations the admin CLI calls (AdminCreateUser, AdminDisableUser,
 * AdminEnableUser) on loopback, in their JSON 1.1 protocol: the SDK signs and sends exactly what it
 * would send to AWS, and every request is recorded. One pool, whatever `UserPoolId` says.
 */
export const startCognito = (): Promise<CognitoStandIn> =>
  new Promise((ok) => {
    const requests: CognitoRequest[] = [];
    const users = new Set<string>();
    const state: { failing: CognitoFault | undefined } = { failing: undefined };
    const server = createServer(async (req, res) => {
      const body = JSON.parse((await readBody(req)) || '{}') as Record<string, unknown>;
      const target = String(req.headers['x-amz-target'] ?? '');
      const operation = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : target;
      requests.push({ operation, authorization: req.headers.authorization ?? '', body });
      res.setHeader('content-type', 'application/x-amz-json-1.1');
      const fail = (status: number, type: string, message: string) => {
        res.statusCode = status;
        res.end(JSON.stringify({ __type: type, message }));
      };
      if (state.failing) return fail(state.failing.status, state.failing.type, state.failing.message);
      const username = String(body.Username ?? '');
      switch (operation) {
        case 'AdminCreateUser': {
          if (users.has(username)) return fail(400, 'UsernameExistsException', 'User account already exists');
          users.add(username);
          const attributes = (body.UserAttributes ?? []) as unknown[];
          return res.end(
            JSON.stringify({
              User: {
                Username: username,
                Attributes: attributes,
                Enabled: true,
                UserStatus: 'FORCE_CHANGE_PASSWORD',
                UserCreateDate: Date.now() / 1000,
              },
            }),
          );
        }
        case 'AdminDisableUser':
        case 'AdminEnableUser':
          if (!users.has(username)) return fail(400, 'UserNotFoundException', 'User does not exist.');
          return res.end('{}');
        default:
          return fail(400, 'UnknownOperationException', `not in the stand-in: ${target}`);
      }
    });
    server.listen(0, '127.0.0.1', () =>
      ok(
        Object.assign(state, {
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          requests,
          users,
          close: () =>
            new Promise<void>((done) => {
              server.closeAllConnections();
              server.close(() => done());
            }),
        }),
      ),
    );
  });
