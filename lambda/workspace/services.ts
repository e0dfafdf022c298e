import type { TokenStore } from '../auth/personal-tokens.js';
import type { DirectoryStore } from './directory-store.js';

/** What the workspace tools, prompts and resources are given; built once per cold start. */
export interface WorkspaceServices {
  readonly directory: DirectoryStore;
  readonly tokens: TokenStore;
}
