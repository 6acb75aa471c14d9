import { signedRequestHeaders } from '../../../lib/aws-signer';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const now = new Date('2026-12-03T08:00:00Z');
const signer = { credentials, region: 'eu-west-1', service: 'lambda', now };
const request = { method: 'get', protocol: 'https:', host: 'lambda.eu-west-1.amazonaws.com', path: '/2015-03-31/x' };

describe('signedRequestHeaders', () => {
  test('signs the host, the date and the payload hash, and names the scope', async () => {
    const headers = await signedRequestHeaders(request, signer);

    expect(headers).toMatchObject({
      host: 'lambda.eu-west-1.amazonaws.com',
      'x-amz-date': '20261203T080000Z',
      'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    });
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261203\/eu-west-1\/lambda\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
  });

  test('the request’s own headers are signed under lower-case names', async () => {
    const headers = await signedRequestHeaders({ ...request, headers: { 'Content-Type': 'application/json' } }, signer);

    expect(headers['content-type']).toBe('application/json');
    expect(headers.authorization).toContain('SignedHeaders=content-type;host;');
  });

  test('a session token is sent and signed', async () => {
    const headers = await signedRequestHeaders(request, {
      ...signer,
      credentials: { ...credentials, sessionToken: 'TOKEN' },
    });

    expect(headers['x-amz-security-token']).toBe('TOKEN');
    expect(headers.authorization).toContain('x-amz-date;x-amz-security-token,');
  });

  test('a host with a port is signed with it', async () => {
    const headers = await signedRequestHeaders({ ...request, protocol: 'http:', host: '127.0.0.1:8010' }, signer);

    expect(headers.host).toBe('127.0.0.1:8010');
  });

  test('the body is hashed into the signature', async () => {
    const empty = await signedRequestHeaders({ ...request, method: 'PUT' }, signer);
    const full = await signedRequestHeaders({ ...request, method: 'PUT', body: '{"Enabled":true}' }, signer);

    expect(full['x-amz-content-sha256']).not.toBe(empty['x-amz-content-sha256']);
    expect(full.authorization).not.toBe(empty.authorization);
  });
});
