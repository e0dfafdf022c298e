/**
 * WWW-Authenticate challenges (RFC 6750 §3, RFC 9728 §5.1). `resource_metadata` comes from the
 * configured public URL only, never from a header a caller controls.
 */
export const metadataPath = '/.well-known/oauth-protected-resource/mcp';

/**
 * Where the same document is also served: RFC 9728 puts it at the path-suffixed URL, but some clients
 * try the bare well-known URL first and give up on a 404.
 */
export const rootMetadataPath = '/.well-known/oauth-protected-resource';

export const metadataUrl = (publicUrl: string): string => `${publicUrl}${metadataPath}`;

const quote = (value: string): string => `"${value.replace(/["\\]/g, '\\$&')}"`;

export interface ChallengeParams {
  readonly error?: 'invalid_token' | 'insufficient_scope';
  readonly errorDescription?: string;
  readonly scope?: string;
  readonly resourceMetadata: string;
}

export const bearerChallenge = (p: ChallengeParams): string => {
  const parts: string[] = [];
  if (p.error) parts.push(`error=${quote(p.error)}`);
  if (p.errorDescription) parts.push(`error_description=${quote(p.errorDescription)}`);
  if (p.scope) parts.push(`scope=${quote(p.scope)}`);
  parts.push(`resource_metadata=${quote(p.resourceMetadata)}`);
  return `Bearer ${parts.join(', ')}`;
};
