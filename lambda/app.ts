import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoAccessReader } from './auth/access-reader.js';
import { builtinTokenVerifier } from './auth/builtin-tokens.js';
import { createCredentialGate, personalTokenVerifier, type TokenVerifier } from './auth/credential-gate.js';
import { protectedResourceMetadata } from './auth/metadata.js';
import type { FileParts } from './files/file-store.js';
import { createErrorMapper } from './http/error-mapper.js';
import type { HttpApp } from './http/pipeline.js';
import type { CallGuard } from './limits/call-guard.js';
import { unlimitedGuard } from './limits/call-guard.js';
import { createDispatcher } from './mcp/dispatcher.js';
import { type PromptDefinition, PromptRegistry } from './mcp/prompt-registry.js';
import { ResourceRegistry, type ResourceTemplateDefinition, type StaticResourceDefinition } from './mcp/resource-registry.js';
import { type ToolDefinition, ToolRegistry } from './mcp/tool-registry.js';
import type { Observer } from './observability/observer.js';
import type { Config } from './platform/config.js';
import type { KeySource } from './platform/key-ring.js';
import { createWorkspaceStores } from './workspace/store/create-stores.js';
import { type ViewSource, viewResources } from './workspace/surface/app-views.js';
import { DEFAULT_TOOL_GROUPS, PRODUCT_PROMPTS, PRODUCT_RESOURCE_TEMPLATES, PRODUCT_TOOLS } from './workspace/surface/catalog.js';
import { jobTasks } from './workspace/surface/long-work.js';
import type { WorkQueue, WorkspaceServices } from './workspace/surface/services.js';

/** Extra declarations for the conformance harness only; the deployed function never passes any. */
export interface Fixtures {
  readonly tools?: readonly ToolDefinition<WorkspaceServices>[];
  readonly prompts?: readonly PromptDefinition[];
  readonly templates?: readonly ResourceTemplateDefinition<WorkspaceServices>[];
  readonly resources?: readonly StaticResourceDefinition<WorkspaceServices>[];
}

export interface Runtime {
  readonly config: Config;
  readonly db: DynamoDBDocumentClient;
  readonly keys: KeySource;
  readonly logger: Logger;
  readonly observer: Observer;
  /** Verifiers beyond personal access tokens (JWT when an authorization server is configured). */
  readonly extraVerifiers?: readonly TokenVerifier[];
  readonly guard?: CallGuard;
  /** The local server answers 403 to a Host that is not loopback (DNS-rebinding protection). */
  readonly loopbackHostOnly?: boolean;
  readonly fixtures?: Fixtures;
  /** Where the MCP Apps views' HTML comes from (lambda/workspace/app-views.ts); without it none is offered. */
  readonly views?: ViewSource;
  /** Attachments' bytes and the type sniffer (lambda/files/), loaded on their first use; without them attachments are refused. */
  readonly files?: FileParts;
  /** Where long work goes to its worker (SQS in AWS, beside the server locally); without it the long tools are refused. */
  readonly work?: WorkQueue;
}

export interface App extends HttpApp {
  readonly config: Config;
  readonly metadata: ReturnType<typeof protectedResourceMetadata>;
  readonly services: WorkspaceServices;
}

/** The workspace's services as every function builds them: the MCP function, and the worker of long work. */
export const createServices = (rt: Pick<Runtime, 'config' | 'db' | 'keys' | 'files' | 'work'>): WorkspaceServices => {
  const { config } = rt;
  return {
    ...createWorkspaceStores(
      rt.db,
      config.tables.workspace,
      rt.keys,
      config.activityDays,
      rt.files ? { ...rt.files, maxBytes: config.attachments.maxBytes, quotaBytes: config.attachments.quotaBytes } : undefined,
      config.functionTimeoutSeconds,
    ),
    keys: rt.keys,
    emailOn: config.notifications.emailFrom !== undefined,
    ...(rt.work ? { work: rt.work } : {}),
  };
};

/** The composition root, run once per cold start: stores, registries, gate, mapper. No I/O here. */
export const createApp = (rt: Runtime): App => {
  const { config } = rt;
  const services = createServices(rt);
  const guard = rt.guard ?? unlimitedGuard;

  const tools = new ToolRegistry<WorkspaceServices>(
    [...PRODUCT_TOOLS, ...(rt.fixtures?.tools ?? [])],
    guard,
    rt.observer,
    DEFAULT_TOOL_GROUPS,
  );
  const prompts = new PromptRegistry(
    [...PRODUCT_PROMPTS, ...(rt.fixtures?.prompts ?? [])],
    (name) => tools.scopeOf(name),
    (name) => tools.groupOf(name),
  );
  const resources = new ResourceRegistry<WorkspaceServices>(
    [...PRODUCT_RESOURCE_TEMPLATES, ...(rt.fixtures?.templates ?? [])],
    [...(rt.views ? viewResources(rt.views) : []), ...(rt.fixtures?.resources ?? [])],
    guard,
    rt.observer,
  );
  // Advertised as the authorization server names them, so a client can ask for exactly these.
  const advertise = (scope: string): string => `${config.jwt?.scopePrefix ?? ''}${scope}`;
  const scopesSupported = [...new Set([...tools.requiredScopes, ...resources.requiredScopes])].map(advertise);
  const access = new DynamoAccessReader(rt.db, config.tables.workspace);
  const gate = createCredentialGate(
    [
      personalTokenVerifier(rt.keys, access),
      ...(config.builtinAuthorizationServer ? [builtinTokenVerifier(rt.keys, access, config.publicUrl)] : []),
      ...(rt.extraVerifiers ?? []),
    ],
    (email) => services.directory.findMemberRefByEmail(email),
    access,
    { cacheSeconds: config.authCacheSeconds },
  );

  return {
    config,
    allowedOrigins: config.allowedOrigins,
    logger: rt.logger,
    observer: rt.observer,
    gate,
    services,
    loopbackHostOnly: rt.loopbackHostOnly ?? false,
    mapError: createErrorMapper({ publicUrl: config.publicUrl, scopesSupported, advertise }),
    dispatch: createDispatcher({ tools, prompts, resources, services, keys: rt.keys, tasks: jobTasks }),
    metadata: protectedResourceMetadata({
      publicUrl: config.publicUrl,
      // The built-in authorization server's issuer is the public URL itself (lambda/oauth/).
      authorizationServers: config.jwt ? [config.jwt.issuer] : [config.publicUrl],
      scopesSupported,
    }),
  };
};
