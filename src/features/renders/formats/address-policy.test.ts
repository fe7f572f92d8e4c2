import { describe, expect, it } from 'vitest';
import { renderDocument } from '../document.js';
import { isAllowedAddress } from './urls.js';

async function html(body: string, data: unknown): Promise<string> {
  const [output] = await renderDocument({ body, data, formats: ['html'], createdAt: 0 });
  const page = output!.content.toString();
  return page.slice(page.indexOf('<body>\n') + 7, page.indexOf('\n</body>'));
}

async function markdownOf(body: string, data: unknown): Promise<string> {
  const [output] = await renderDocument({ body, data, formats: ['markdown'], createdAt: 0 });
  return output!.content.toString();
}

// Each spelling a browser reads as a script or another host (WHATWG URL parsing, HTML attribute decoding).
const REFUSED = [
  'javascript:alert(1)',
  '\u0001javascript:alert(1)',
  '\u001fjavascript:alert(1)',
  ' \u0000javascript:alert(1)',
  'java\tscript:alert(1)',
  'java\nscript:alert(1)',
  'JaVaScRiPt:alert(1)',
  'javascript:alert(1)\u0001',
  'vbscript:msgbox(1)',
  'data:text/html,<script>alert(1)</script>',
  'file:///etc/passwd',
  '//evil.example',
  '\\\\evil.example',
  '/\\evil.example',
  ' //evil.example',
];

const ALLOWED = ['https://pay.test/x', 'HTTP://a.test', 'mailto:a@b.test', 'tel:+331234', '/path', 'page.html', '#top', '?q=1', 'a:b/../x'.slice(2)];

describe('the address policy', () => {
  it('refuses every scheme but http, https, mailto and tel, and protocol-relative addresses, as a browser parses them', () => {
    for (const address of REFUSED) expect(isAllowedAddress(address), JSON.stringify(address)).toBe(false);
    for (const address of ALLOWED) expect(isAllowedAddress(address), JSON.stringify(address)).toBe(true);
  });

  it('links nowhere but # for a refused value, in links, images, reference links and raw HTML alike', async () => {
    for (const url of REFUSED) {
      const body = `[a]({{url}}) ![i]({{url}}) [r][ref] <a href="{{url}}">h</a> <a href='{{url}}'>s</a> <a href={{url}}>u</a>\n\n[ref]: {{url}}`;
      const out = await html(body, { url });
      const addresses = [...out.matchAll(/(?:href|src)="([^"]*)"/g)].map((m) => m[1]);
      expect(addresses, JSON.stringify(url)).toEqual(['#', '#', '#', '#', '#', '#']);
    }
  });

  it('judges the whole address, so values cannot finish a scheme the body or another value began', async () => {
    expect(await html('[a]({{a}}{{b}})', { a: 'java', b: 'script:alert(1)' })).toBe('<p><a href="#">a</a></p>');
    expect(await html('[a](java{{b}})', { b: 'script:alert(1)' })).toBe('<p><a href="#">a</a></p>');
    expect(await html('[a](https://x.test/{{p}})', { p: 'javascript:alert(1)' })).toBe('<p><a href="https://x.test/javascript:alert(1)">a</a></p>');
  });

  it('applies to addresses the body or a triple-stash value wrote, character references decoded', async () => {
    expect(await html('[a](&#x6A;avascript:alert(1)) <a href="jav&#x09;ascript:alert(1)">b</a>', {})).toBe('<p><a href="#">a</a> <a href="#">b</a></p>');
    expect(await html('{{{x}}}', { x: '[a](javascript:alert(1)) <a href="javascript:alert(1)">b</a>' })).toBe('<p><a href="#">a</a> <a href="#">b</a></p>');
    expect(await html('<https://ok.test> www.ok.test', {})).toContain('<a href="https://ok.test">');
  });

  it('keeps values out of tag names, attribute names and event handlers, and quotes unquoted values', async () => {
    expect(await html('<span title={{t}}>x</span>', { t: 'a onmouseover=alert(1)' })).toBe('<p><span title="a onmouseover=alert(1)">x</span></p>');
    expect(await html('<b onclick="go(\'{{t}}\')">x</b>', { t: "');alert(1);('" })).toBe('<p><b onclick="go(\'\')">x</b></p>');
    expect(await html('<{{t}}>x', { t: 'img src=x onerror=alert(1)' })).not.toMatch(/onerror|<img/);
    expect(await html('<i {{t}}>x</i>', { t: 'onclick=alert(1)' })).toBe('<p><i>x</i></p>');
  });

  it('polices markup, redirect and CSS attributes by an allow-list: srcdoc dropped, meta refresh through the link policy (refused: no refresh at all), style reduced to safe declarations', async () => {
    const bio = '<script>alert(1)</script>';
    expect(await html('<iframe srcdoc="{{bio}}"></iframe>', { bio })).toBe('<iframe></iframe>');
    expect(await html('<iframe title="{{bio}}" srcdoc="<p>hi</p>"></iframe>', { bio })).toBe('<iframe title="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>');
    for (const u of ['javascript:alert(1)', 'data:text/html,<script>alert(1)</script>', ' JAVA	SCRIPT:alert(1)']) {
      expect(await html('<meta http-equiv=refresh content="0; url={{u}}">', { u }), u).toBe('<meta http-equiv="refresh">');
    }
    expect(await html('<meta http-equiv="Refresh" content="{{c}}">', { c: "0;URL='javascript:alert(1)'" })).toBe('<meta http-equiv="Refresh">');
    expect(await html('<meta http-equiv=refresh content="0; url={{u}}">', { u: 'https://ok.test/next' })).toBe(
      '<meta http-equiv="refresh" content="0; url=https://ok.test/next">',
    );
    expect(await html('<meta http-equiv=refresh content="0; url=javascript:alert(1)">', {})).toBe('<meta http-equiv="refresh">');
    // A merge value never reaches CSS; the body's own declarations stay when they are plain.
    expect(await html('<p style="{{s}}">x</p>', { s: 'background:url(javascript:alert(1))' })).toBe('<p>x</p>');
    expect(await html('<p style="color: red; {{s}}">x</p>', { s: 'width: expression(alert(1))' })).toBe('<p style="color: red">x</p>');
    expect(await html('<p style="color:#333;background-image:url(https://t.example/p.png);font-weight:bold;width:calc(1px)">x</p>', {})).toBe(
      '<p style="color: #333; font-weight: bold">x</p>',
    );
    expect(await html('{{{x}}}', { x: '<p style="color: rgb(1, 2, 3); behavior: url(x.htc); c\\olor: red">x</p>' })).toBe(
      '<p style="color: rgb(1, 2, 3)">x</p>',
    );
  });

  it('writes # in the markdown output where a value would make a refused address or autolink', async () => {
    expect(await markdownOf('[a]({{u}}) <{{u}}>\n\n[r]: {{u}}', { u: '\u0001javascript:alert(1)' })).toBe('[a](#) <#>\n\n[r]: #');
    expect(await markdownOf('[a]({{u}})', { u: '//evil.example' })).toBe('[a](#)');
    expect(await markdownOf('[a]({{u}}) <{{u}}>', { u: 'https://ok.test/a b' })).toBe('[a](https://ok.test/a%20b) <https://ok.test/a b>');
  });
});
