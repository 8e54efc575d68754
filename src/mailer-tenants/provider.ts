// Amazon SES (SESv2) and STS calls of the tenant feature, with the server's key (SVC_MAILER_*).
// The key only manages tenants; it never sends mail. Every call is safe to repeat: "already
// exists" and "not found" answers count as done, and the SDK retries throttling and 5xx answers.
import type {
  CreateTenantCommandOutput,
  CreateTenantResourceAssociationCommandOutput,
  DeleteTenantCommandOutput,
  GetReputationEntityCommandOutput,
  GetTenantCommandOutput,
  ListEmailIdentitiesCommandOutput,
  ListReputationEntitiesCommandOutput,
  ListTenantResourcesCommandOutput,
  PutTenantSuppressionAttributesCommandOutput,
  ReputationEntity,
  SESv2Client,
  Tag,
  TagResourceCommandOutput,
  Tenant,
  UpdateReputationEntityCustomerManagedStatusCommandOutput,
} from '@aws-sdk/client-sesv2';
import type { STSClient } from '@aws-sdk/client-sts';
import type { Config } from '../config.js';
import type { Ctx } from '../context.js';

export type MailerConfig = NonNullable<Config['mailer']>;
export type { ReputationEntity, Tenant };

const REQUEST_TIMEOUTS = { connectionTimeout: 5_000, requestTimeout: 15_000 };

/** One line for storage and logs: the provider's error name and message (never credentials). */
export function describeProviderError(error: unknown): string {
  const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode ? ` (HTTP ${e.$metadata.httpStatusCode})` : '';
  return `${e.name ?? 'Error'}: ${e.message ?? String(error)}${status}`.replace(/\s+/g, ' ').slice(0, 500);
}

const isNamed = (error: unknown, ...names: string[]) => names.includes((error as { name?: string }).name ?? '');

type SesModule = typeof import('@aws-sdk/client-sesv2');
type StsModule = typeof import('@aws-sdk/client-sts');

export class MailerProvider {
  private account: Promise<string> | undefined;
  private keyAccounts = new Map<string, Promise<string>>();
  // The SDK is loaded on first use, so that the server and commands that make no call start fast.
  private sdk: Promise<{ ses: SESv2Client; sts: STSClient; S: SesModule; T: StsModule }> | undefined;

  constructor(readonly config: MailerConfig) {}

  private clients() {
    this.sdk ??= Promise.all([import('@aws-sdk/client-sesv2'), import('@aws-sdk/client-sts')]).then(([S, T]) => {
      const common = {
        region: this.config.region,
        endpoint: this.config.endpoint,
        credentials: { accessKeyId: this.config.accessKeyId, secretAccessKey: this.config.secretAccessKey },
        maxAttempts: 3,
        requestHandler: REQUEST_TIMEOUTS,
      };
      return { ses: new S.SESv2Client(common), sts: new T.STSClient(common), S, T };
    });
    return this.sdk;
  }

  private async call<R>(make: (S: SesModule) => unknown): Promise<R> {
    const { ses, S } = await this.clients();
    return (await ses.send(make(S) as never)) as R;
  }

  /** The account of the server's key (STS GetCallerIdentity), asked once. */
  serverAccount(): Promise<string> {
    this.account ??= this.clients()
      .then(({ sts, T }) => sts.send(new T.GetCallerIdentityCommand({})))
      .then((r) => r.Account!);
    this.account.catch(() => (this.account = undefined));
    return this.account;
  }

  /** The account an access key belongs to (STS GetAccessKeyInfo), asked once per key. */
  accountOfKey(accessKeyId: string): Promise<string> {
    let known = this.keyAccounts.get(accessKeyId);
    if (!known) {
      known = this.clients()
        .then(({ sts, T }) => sts.send(new T.GetAccessKeyInfoCommand({ AccessKeyId: accessKeyId })))
        .then((r) => r.Account!);
      known.catch(() => this.keyAccounts.delete(accessKeyId));
      this.keyAccounts.set(accessKeyId, known);
    }
    return known;
  }

  async getTenant(name: string): Promise<Tenant | undefined> {
    try {
      return (await this.call<GetTenantCommandOutput>((S) => new S.GetTenantCommand({ TenantName: name }))).Tenant;
    } catch (error) {
      if (isNamed(error, 'NotFoundException')) return undefined;
      throw error;
    }
  }

  /** Creates the tenant with tenant-level suppression of bounces and complaints (an existing one is returned). */
  async createTenant(name: string, tags: Tag[]): Promise<Tenant> {
    try {
      const r = await this.call<CreateTenantCommandOutput>(
        (S) =>
          new S.CreateTenantCommand({
            TenantName: name,
            Tags: tags,
            SuppressionAttributes: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'], SuppressionScope: 'TENANT' },
          }),
      );
      return {
        TenantName: r.TenantName,
        TenantId: r.TenantId,
        TenantArn: r.TenantArn,
        SendingStatus: r.SendingStatus,
        Tags: r.Tags,
        SuppressionAttributes: r.SuppressionAttributes,
      };
    } catch (error) {
      if (!isNamed(error, 'AlreadyExistsException')) throw error;
      const existing = await this.getTenant(name);
      if (!existing) throw error;
      return existing;
    }
  }

  async putSuppression(name: string): Promise<void> {
    await this.call<PutTenantSuppressionAttributesCommandOutput>(
      (S) => new S.PutTenantSuppressionAttributesCommand({ TenantName: name, SuppressedReasons: ['BOUNCE', 'COMPLAINT'], SuppressionScope: 'TENANT' }),
    );
  }

  async tag(arn: string, tags: Tag[]): Promise<void> {
    await this.call<TagResourceCommandOutput>((S) => new S.TagResourceCommand({ ResourceArn: arn, Tags: tags }));
  }

  async tenantResources(name: string): Promise<{ type: string; arn: string }[]> {
    const out: { type: string; arn: string }[] = [];
    let token: string | undefined;
    do {
      const r = await this.call<ListTenantResourcesCommandOutput>(
        (S) => new S.ListTenantResourcesCommand({ TenantName: name, NextToken: token, PageSize: 100 }),
      );
      for (const x of r.TenantResources ?? []) out.push({ type: x.ResourceType ?? 'UNKNOWN', arn: x.ResourceArn ?? '' });
      token = r.NextToken;
    } while (token);
    return out;
  }

  async associate(name: string, arn: string): Promise<void> {
    try {
      await this.call<CreateTenantResourceAssociationCommandOutput>(
        (S) => new S.CreateTenantResourceAssociationCommand({ TenantName: name, ResourceArn: arn }),
      );
    } catch (error) {
      if (!isNamed(error, 'AlreadyExistsException')) throw error;
    }
  }

  async deleteTenant(name: string): Promise<void> {
    try {
      await this.call<DeleteTenantCommandOutput>((S) => new S.DeleteTenantCommand({ TenantName: name }));
    } catch (error) {
      if (!isNamed(error, 'NotFoundException')) throw error;
    }
  }

  async reputation(arn: string): Promise<ReputationEntity | undefined> {
    try {
      return (
        await this.call<GetReputationEntityCommandOutput>(
          (S) => new S.GetReputationEntityCommand({ ReputationEntityType: 'RESOURCE', ReputationEntityReference: arn }),
        )
      ).ReputationEntity;
    } catch (error) {
      if (isNamed(error, 'NotFoundException')) return undefined;
      throw error;
    }
  }

  /** Every reputation entity of the account, page by page. */
  async *reputations(): AsyncGenerator<ReputationEntity> {
    let token: string | undefined;
    do {
      const r = await this.call<ListReputationEntitiesCommandOutput>((S) => new S.ListReputationEntitiesCommand({ NextToken: token, PageSize: 100 }));
      for (const e of r.ReputationEntities ?? []) yield e;
      token = r.NextToken;
    } while (token);
  }

  /** Lifts a pause of the reputation policy: the customer-managed status becomes REINSTATED. */
  async reinstate(arn: string): Promise<void> {
    await this.call<UpdateReputationEntityCustomerManagedStatusCommandOutput>(
      (S) =>
        new S.UpdateReputationEntityCustomerManagedStatusCommand({
          ReputationEntityType: 'RESOURCE',
          ReputationEntityReference: arn,
          SendingStatus: 'REINSTATED',
        }),
    );
  }

  /** Verified identities that may send (domains and addresses). */
  async identities(): Promise<{ name: string; type: string }[]> {
    const out: { name: string; type: string }[] = [];
    let token: string | undefined;
    do {
      const r = await this.call<ListEmailIdentitiesCommandOutput>((S) => new S.ListEmailIdentitiesCommand({ NextToken: token, PageSize: 1000 }));
      for (const i of r.EmailIdentities ?? []) {
        if (i.IdentityName && i.SendingEnabled !== false && (i.VerificationStatus === undefined || i.VerificationStatus === 'SUCCESS'))
          out.push({ name: i.IdentityName.toLowerCase(), type: i.IdentityType ?? 'DOMAIN' });
      }
      token = r.NextToken;
    } while (token);
    return out;
  }

  close(): void {
    void this.sdk?.then(({ ses, sts }) => {
      ses.destroy();
      sts.destroy();
    });
  }
}

// One provider (with its STS caches) per running app.
const providers = new WeakMap<object, MailerProvider>();

/** The app's provider, or undefined when the tenant feature is off (SVC_MAILER_* not set). */
export function mailerProvider(ctx: Pick<Ctx, 'config' | 'sealer'>): MailerProvider | undefined {
  if (!ctx.config.mailer) return undefined;
  let p = providers.get(ctx.sealer);
  if (!p) {
    p = new MailerProvider(ctx.config.mailer);
    providers.set(ctx.sealer, p);
  }
  return p;
}

export function configurationSetArn(config: MailerConfig, account: string): string {
  return `arn:aws:ses:${config.region}:${account}:configuration-set/${config.configurationSet}`;
}

export function identityArn(config: MailerConfig, account: string, identity: string): string {
  return `arn:aws:ses:${config.region}:${account}:identity/${identity}`;
}

/** The SES SMTP endpoint of the server's region. */
export function sesSmtpEndpoint(config: MailerConfig): string {
  return `email-smtp.${config.region}.amazonaws.com`;
}
