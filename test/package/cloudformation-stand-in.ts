/**
 * A stand-in for CloudFormation's and DynamoDB's answers, on loopback, for the package test: the
 * packed CLI is pointed at it with `AWS_ENDPOINT_URL_CLOUDFORMATION` / `AWS_ENDPOINT_URL_DYNAMODB`
 * (the SDK's service-specific endpoint variables), so its stack and pipeline resolution runs as it
 * would against a deployed stack.
 *
 * DescribeStacks (AWS query protocol, XML) answers with the outputs of a synthesized template, each
 * intrinsic function given a stable fake value (`Ref` X -> `ref-X`, `Fn::GetAtt` [X, A] -> `X.A`).
 * DynamoDB GetItem (JSON 1.0) answers "no item" and records the table each request names, which is
 * how a test sees which pipeline a command reached.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Template = { readonly Outputs?: Record<string, { Value: unknown; Description?: string }> };

/** A fake, stable value for an intrinsic function in an output's value. */
export function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  const node = value as Record<string, unknown>;
  if ('Ref' in node) {
    const ref = String(node.Ref);
    return ref.startsWith('AWS::')
      ? ({ 'AWS::Region': 'us-east-1', 'AWS::AccountId': '111122223333' }[ref] ?? ref)
      : `ref-${ref}`;
  }
  if ('Fn::GetAtt' in node) return (node['Fn::GetAtt'] as unknown[]).map(String).join('.');
  if ('Fn::Join' in node) {
    const [separator, parts] = node['Fn::Join'] as [string, unknown[]];
    return parts.map(render).join(separator);
  }
  if ('Fn::Select' in node) {
    const [index, list] = node['Fn::Select'] as [number, unknown];
    const items = Array.isArray(list) ? list.map(render) : render(list).split(',');
    return items[Number(index)] ?? '';
  }
  if ('Fn::Split' in node) {
    const [separator, source] = node['Fn::Split'] as [string, unknown];
    return render(source).split(separator).join(',');
  }
  throw new Error(`the stand-in cannot render ${JSON.stringify(value)}`);
}

const xml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function describeStacks(name: string, template: Template): string {
  const outputs = Object.entries(template.Outputs ?? {})
    .map(
      ([key, o]) =>
        `<member><OutputKey>${xml(key)}</OutputKey><OutputValue>${xml(render(o.Value))}</OutputValue>` +
        `<Description>${xml(o.Description ?? '')}</Description></member>`,
    )
    .join('');
  return (
    '<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks>' +
    `<member><StackName>${xml(name)}</StackName><StackId>arn:aws:cloudformation:us-east-1:111122223333:stack/${xml(name)}/1</StackId>` +
    `<CreationTime>2026-12-01T00:00:00Z</CreationTime><StackStatus>CREATE_COMPLETE</StackStatus><Outputs>${outputs}</Outputs></member>` +
    '</Stacks></DescribeStacksResult><ResponseMetadata><RequestId>stand-in</RequestId></ResponseMetadata></DescribeStacksResponse>'
  );
}

export interface StandIn {
  readonly endpoint: string;
  /** The TableName of every DynamoDB request, in order. */
  readonly tablesRead: string[];
  close(): Promise<void>;
}

/** Serves the stacks `templates` (by stack name) until closed. */
export async function startStandIn(templates: Readonly<Record<string, Template>>): Promise<StandIn> {
  const tablesRead: string[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const target = request.headers['x-amz-target'];
      if (typeof target === 'string' && target.startsWith('DynamoDB_')) {
        const parsed = JSON.parse(body) as { TableName?: string };
        tablesRead.push(parsed.TableName ?? '');
        response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        response.end('{}');
        return;
      }
      const form = new URLSearchParams(body);
      const name = form.get('StackName') ?? '';
      const template = form.get('Action') === 'DescribeStacks' ? templates[name] : undefined;
      if (template === undefined) {
        response.writeHead(400, { 'content-type': 'text/xml' });
        response.end(
          '<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type>' +
            `<Code>ValidationError</Code><Message>Stack with id ${xml(name)} does not exist</Message></Error>` +
            '<RequestId>stand-in</RequestId></ErrorResponse>',
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'text/xml' });
      response.end(describeStacks(name, template));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    tablesRead,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
