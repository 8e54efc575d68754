// Amazon SESv2 (tenants, resource associations, reputation entities, identities, tags) and STS
// (GetCallerIdentity, GetAccessKeyInfo) on the loopback fake (helpers/aws.ts), speaking the wire
// formats the AWS SDK uses: REST-JSON paths and bodies for SESv2 with errors in the
// x-amzn-ErrorType header, and the STS query protocol (form-encoded Action) with XML answers.
import { randomUUID } from 'node:crypto';
import type { AwsFake, FakeAnswer, FakeRequest } from './aws.js';

export interface FakeStatus {
  Status: 'ENABLED' | 'REINSTATED' | 'DISABLED';
  Cause?: string;
}

export interface FakeTenant {
  name: string;
  id: string;
  arn: string;
  tags: { Key: string; Value: string }[];
  suppression: { SuppressedReasons: string[]; SuppressionScope: string } | undefined;
  resources: Set<string>;
  aws: FakeStatus;
  customer: FakeStatus;
}

export interface SesFake {
  region: string;
  account: string;
  /** Access key → account (GetAccessKeyInfo). */
  keyAccounts: Map<string, string>;
  tenants: Map<string, FakeTenant>;
  identities: { IdentityName: string; IdentityType: 'DOMAIN' | 'EMAIL_ADDRESS' }[];
  /** Operation names in call order. */
  calls: string[];
  /** Operations that change something at the provider. */
  writes(): string[];
  /** Makes the next call of the operation fail with this AWS error. */
  failNext(operation: string, error: { status: number; type: string; message: string }): void;
  setStatus(tenantName: string, who: 'aws' | 'customer', status: FakeStatus['Status'], cause?: string): void;
}

const WRITES = new Set([
  'CreateTenant',
  'DeleteTenant',
  'CreateTenantResourceAssociation',
  'DeleteTenantResourceAssociation',
  'PutTenantSuppressionAttributes',
  'TagResource',
  'UpdateReputationEntityCustomerManagedStatus',
]);

function json(status: number, body: unknown): FakeAnswer {
  return { status, body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID() } };
}

function restError(status: number, type: string, message: string): FakeAnswer {
  return {
    status,
    body: JSON.stringify({ message }),
    headers: {
      'content-type': 'application/json',
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazonaws.sesv2/`,
      'x-amzn-requestid': randomUUID(),
    },
  };
}

function xml(status: number, body: string): FakeAnswer {
  return { status, body, headers: { 'content-type': 'text/xml', 'x-amzn-requestid': randomUUID() } };
}

function stsError(status: number, code: string, message: string): FakeAnswer {
  return xml(
    status,
    `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
  );
}

export function installSesFake(
  aws: AwsFake,
  opts: { region?: string; account: string; serverKey: string; keyAccounts?: Record<string, string>; identities?: SesFake['identities'] },
): SesFake {
  const region = opts.region ?? 'us-east-1';
  const tenants = new Map<string, FakeTenant>();
  const calls: string[] = [];
  const failures = new Map<string, { status: number; type: string; message: string }>();
  const fake: SesFake = {
    region,
    account: opts.account,
    keyAccounts: new Map(Object.entries({ [opts.serverKey]: opts.account, ...(opts.keyAccounts ?? {}) })),
    tenants,
    identities: opts.identities ?? [],
    calls,
    writes: () => calls.filter((c) => WRITES.has(c)),
    failNext: (operation, error) => failures.set(operation, error),
    setStatus(name, who, status, cause) {
      const t = tenants.get(name);
      if (!t) throw new Error(`no tenant ${name}`);
      t[who] = { Status: status, Cause: cause };
    },
  };
  const byArn = (arn: string) => [...tenants.values()].find((t) => t.arn === arn);
  const tenantJson = (t: FakeTenant) => ({
    TenantName: t.name,
    TenantId: t.id,
    TenantArn: t.arn,
    CreatedTimestamp: 1_700_000_000,
    Tags: t.tags,
    SendingStatus: aggregate(t),
    SuppressionAttributes: t.suppression,
  });
  const aggregate = (t: FakeTenant) =>
    t.aws.Status === 'DISABLED' || t.customer.Status === 'DISABLED' ? 'DISABLED' : t.customer.Status === 'REINSTATED' ? 'REINSTATED' : 'ENABLED';
  const entityJson = (t: FakeTenant) => ({
    ReputationEntityReference: t.arn,
    ReputationEntityType: 'RESOURCE',
    ReputationManagementPolicy: `arn:aws:ses:${region}:aws:reputation-policy/standard`,
    CustomerManagedStatus: { ...t.customer, LastUpdatedTimestamp: 1_700_000_000 },
    AwsSesManagedStatus: { ...t.aws, LastUpdatedTimestamp: 1_700_000_000 },
    SendingStatusAggregate: aggregate(t),
    ReputationImpact: 'LOW',
  });

  const signedBy = (r: FakeRequest) => /Credential=([A-Z0-9]+)\//.exec(String(r.headers.authorization ?? ''))?.[1];

  const sts = (r: FakeRequest): FakeAnswer | undefined => {
    if (r.method !== 'POST' || r.path !== '/') return undefined;
    const form = new URLSearchParams(r.body);
    const action = form.get('Action');
    if (!action) return undefined;
    calls.push(action);
    if (signedBy(r) !== opts.serverKey) return stsError(403, 'InvalidClientTokenId', 'The security token included in the request is invalid.');
    const failure = failures.get(action);
    if (failure) {
      failures.delete(action);
      return stsError(failure.status, failure.type, failure.message);
    }
    const meta = `<ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata>`;
    if (action === 'GetCallerIdentity') {
      return xml(
        200,
        `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>arn:aws:iam::${opts.account}:user/svc-tenants</Arn><UserId>AIDAFAKEUSER</UserId><Account>${opts.account}</Account></GetCallerIdentityResult>${meta}</GetCallerIdentityResponse>`,
      );
    }
    if (action === 'GetAccessKeyInfo') {
      const account = fake.keyAccounts.get(form.get('AccessKeyId') ?? '') ?? '999999999999';
      return xml(
        200,
        `<GetAccessKeyInfoResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetAccessKeyInfoResult><Account>${account}</Account></GetAccessKeyInfoResult>${meta}</GetAccessKeyInfoResponse>`,
      );
    }
    return stsError(400, 'InvalidAction', `Could not find operation ${action}`);
  };

  const ses = (r: FakeRequest): FakeAnswer | undefined => {
    if (!r.path.startsWith('/v2/email/')) return undefined;
    const body = r.body ? (JSON.parse(r.body) as Record<string, any>) : {};
    const route = (): [string, () => FakeAnswer] | undefined => {
      const p = r.path;
      const entity = /^\/v2\/email\/reputation\/entities\/([^/]+)\/([^/]+)(\/customer-managed-status)?$/.exec(p);
      if (r.method === 'POST' && p === '/v2/email/tenants')
        return [
          'CreateTenant',
          () => {
            if (tenants.has(body.TenantName)) return restError(400, 'AlreadyExistsException', `Tenant ${body.TenantName} already exists`);
            if (!/^[A-Za-z0-9_-]{1,64}$/.test(body.TenantName ?? '')) return restError(400, 'BadRequestException', 'Invalid tenant name');
            const id = `tn-${randomUUID().slice(0, 12)}`;
            const t: FakeTenant = {
              name: body.TenantName,
              id,
              arn: `arn:aws:ses:${region}:${opts.account}:tenant/${body.TenantName}/${id}`,
              tags: body.Tags ?? [],
              suppression: body.SuppressionAttributes,
              resources: new Set(),
              aws: { Status: 'ENABLED' },
              customer: { Status: 'ENABLED' },
            };
            tenants.set(t.name, t);
            return json(200, tenantJson(t));
          },
        ];
      if (r.method === 'POST' && p === '/v2/email/tenants/get')
        return [
          'GetTenant',
          () =>
            tenants.has(body.TenantName)
              ? json(200, { Tenant: tenantJson(tenants.get(body.TenantName)!) })
              : restError(404, 'NotFoundException', 'Tenant not found'),
        ];
      if (r.method === 'POST' && p === '/v2/email/tenants/delete')
        return ['DeleteTenant', () => (tenants.delete(body.TenantName) ? json(200, {}) : restError(404, 'NotFoundException', 'Tenant not found'))];
      if (r.method === 'POST' && p === '/v2/email/tenants/resources')
        return [
          'CreateTenantResourceAssociation',
          () => {
            const t = tenants.get(body.TenantName);
            if (!t) return restError(404, 'NotFoundException', 'Tenant not found');
            if (t.resources.has(body.ResourceArn)) return restError(400, 'AlreadyExistsException', 'Association already exists');
            t.resources.add(body.ResourceArn);
            return json(200, {});
          },
        ];
      if (r.method === 'POST' && p === '/v2/email/tenants/resources/list')
        return [
          'ListTenantResources',
          () => {
            const t = tenants.get(body.TenantName);
            if (!t) return restError(404, 'NotFoundException', 'Tenant not found');
            return json(200, {
              TenantResources: [...t.resources].map((arn) => ({
                ResourceType: arn.includes(':configuration-set/') ? 'CONFIGURATION_SET' : 'EMAIL_IDENTITY',
                ResourceArn: arn,
              })),
            });
          },
        ];
      if (r.method === 'POST' && p === '/v2/email/tenant/suppression')
        return [
          'PutTenantSuppressionAttributes',
          () => {
            const t = tenants.get(body.TenantName);
            if (!t) return restError(404, 'NotFoundException', 'Tenant not found');
            t.suppression = { SuppressedReasons: body.SuppressedReasons, SuppressionScope: body.SuppressionScope };
            return json(200, {});
          },
        ];
      if (r.method === 'POST' && p === '/v2/email/tags')
        return [
          'TagResource',
          () => {
            const t = byArn(body.ResourceArn);
            if (!t) return restError(404, 'NotFoundException', 'Resource not found');
            for (const tag of body.Tags ?? []) t.tags = [...t.tags.filter((x) => x.Key !== tag.Key), tag];
            return json(200, {});
          },
        ];
      if (r.method === 'POST' && p === '/v2/email/reputation/entities')
        return [
          'ListReputationEntities',
          () => {
            const all = [...tenants.values()].map(entityJson);
            const start = Number(body.NextToken ?? 0);
            const size = Number(body.PageSize ?? 100);
            const page = all.slice(start, start + size);
            return json(200, { ReputationEntities: page, ...(start + size < all.length ? { NextToken: String(start + size) } : {}) });
          },
        ];
      if (entity && r.method === 'GET' && !entity[3])
        return [
          'GetReputationEntity',
          () =>
            byArn(decodeURIComponent(entity[2]))
              ? json(200, { ReputationEntity: entityJson(byArn(decodeURIComponent(entity[2]))!) })
              : restError(404, 'NotFoundException', 'Reputation entity not found'),
        ];
      if (entity && r.method === 'PUT' && entity[3])
        return [
          'UpdateReputationEntityCustomerManagedStatus',
          () => {
            const t = byArn(decodeURIComponent(entity[2]));
            if (!t) return restError(404, 'NotFoundException', 'Reputation entity not found');
            t.customer = { Status: body.SendingStatus, Cause: 'set by the customer' };
            return json(200, {});
          },
        ];
      if ((r.method === 'POST' && p === '/v2/email/list-identities') || (r.method === 'GET' && p === '/v2/email/identities'))
        return [
          'ListEmailIdentities',
          () => json(200, { EmailIdentities: fake.identities.map((i) => ({ ...i, SendingEnabled: true, VerificationStatus: 'SUCCESS' })) }),
        ];
      return undefined;
    };
    const found = route();
    if (!found) return restError(404, 'UnknownOperationException', `no operation at ${r.method} ${r.path}`);
    const [operation, run] = found;
    calls.push(operation);
    if (signedBy(r) !== opts.serverKey) return restError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
    const failure = failures.get(operation);
    if (failure) {
      failures.delete(operation);
      return restError(failure.status, failure.type, failure.message);
    }
    return run();
  };

  aws.route(sts);
  aws.route(ses);
  return fake;
}
