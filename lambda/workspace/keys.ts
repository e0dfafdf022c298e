/**
 * Item keys of the single workspace table (layout in README "Data model"). Every item of a
 * workspace lives under its `WS#` partition, so a query can never leave the caller's workspace.
 */
export const wsPk = (workspaceId: string): string => `WS#${workspaceId}`;
export const WORKSPACE_SK = 'META';
export const memberSk = (userId: string): string => `USER#${userId}`;
export const MEMBER_PREFIX = 'USER#';
export const emailPk = (email: string): string => `EMAIL#${email.toLowerCase()}`;
export const EMAIL_SK = 'EMAIL';
export const tokenPk = (hash: string): string => `TOKEN#${hash}`;
export const TOKEN_SK = 'TOKEN';
export const tokensOfWorkspaceGsiPk = (workspaceId: string): string => `WS#${workspaceId}#TOKENS`;
