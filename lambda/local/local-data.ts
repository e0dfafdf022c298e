/**
 * What a local server leaves in its data dir for other processes, and the demo workspace's id: the
 * admin CLI reads these without loading the local server itself. Imports nothing.
 */

/** The file naming a running local server's DynamoDB endpoint and tables (JSON). */
export const LOCAL_SERVER_FILE = 'local-server.json';

export const DEMO_WORKSPACE_ID = 'ws_demo';

export interface LocalServerFile {
  readonly url: string;
  readonly dynamodbEndpoint: string;
  readonly pid: number;
  readonly tables: { readonly workspace: string; readonly limits: string };
  /** Where its attachments' bytes are: the S3 API and bucket (older servers left none). */
  readonly files?: { readonly endpoint: string; readonly bucket: string };
}
