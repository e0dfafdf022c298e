import { type FromEnvInit, fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Bundling only (lib/bundling.ts aliases `@aws-sdk/credential-provider-node` to this file): the
 * credential chain for a Lambda function, which always finds its role's credentials in
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN. The full chain (profiles, SSO, STS web
 * identity, process, container and instance metadata) is the first provider it would try and then
 * never use, and it carries the STS, SSO and sign-in clients: 137 KB of a 617 KB bundle. Run anywhere
 * without those variables, the SDK's own "Unable to find environment variable credentials" names
 * the cause.
 */
export const defaultProvider = (init?: FromEnvInit) => fromEnv(init);
