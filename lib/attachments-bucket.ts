import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption, type CfnBucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { TRASH_PREFIX } from '../lambda/platform/item-keys.js';

/** Properties of {@link AttachmentsBucket}. */
export interface AttachmentsBucketProps {
  /**
   * Days a deleted attachment's bytes are kept for its undo: the activity records' retention
   * (`DOERS_ACTIVITY_DAYS`); the bucket keeps them a day longer, then removes them.
   */
  readonly activityDays: number;
  /**
   * What happens to the bucket when it leaves the stack. It holds every team's files, so the default
   * keeps it, as the workspace table is kept.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The bucket attachments' bytes live in (lambda/files/s3-files.ts): encrypted with S3's own keys,
 * public access blocked, TLS only, no ACLs (the bucket owner owns every object), no CORS (no page
 * of ours reads it: files reach a person through MCP's resources/read), retained when the stack goes.
 * Live objects are under `workspaces/<workspaceId>/…`; a deleted attachment's bytes are copied to
 * `trash/…` for its undo, and the lifecycle removes them once the undo window is over (and any
 * multipart upload left unfinished, which the function never starts).
 */
export class AttachmentsBucket extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: AttachmentsBucketProps) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: false,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      lifecycleRules: [
        { id: 'trash-after-undo-window', prefix: TRASH_PREFIX, expiration: Duration.days(props.activityDays + 1) },
        { id: 'unfinished-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Every read and write of an attachment is an MCP call the function records (the audit line and the activity record name who, ' +
        'which file and when); S3 server access logs would add a second bucket and say less.',
    });
  }

  /** The object prefixes the function works in: live files, and deleted ones kept for their undo. */
  static readonly PREFIXES = ['workspaces/*', `${TRASH_PREFIX}workspaces/*`] as const;

  /** The acknowledgement of the prefix wildcards the function's grant needs (AwsSolutions-IAM5), on the grantee's scope. */
  acknowledgementsFor(): { readonly id: string; readonly reason: string }[] {
    const arn = `<${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket)}.Arn>`;
    return AttachmentsBucket.PREFIXES.map((prefix) => ({
      id: `AwsSolutions-IAM5[Resource::${arn}/${prefix}]`,
      reason:
        "Attachments are objects under the workspaces' prefixes (and their trash), named by ids made at upload: " +
        'the grant is the three object actions the function uses on those prefixes, nothing on the bucket itself.',
    }));
  }

  /**
   * The function's access: exactly the object actions it uses (put, get, delete; a copy is a get
   * and a put) on the live and trash prefixes, nothing on the bucket itself (it lists nothing).
   */
  grantFunction(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'],
        resources: AttachmentsBucket.PREFIXES.map((prefix) => this.bucket.arnForObjects(prefix)),
      }),
    );
  }
}
