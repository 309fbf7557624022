import {
  Controller,
  Get,
  Header,
  Headers,
  NotFoundException,
  Param,
  Res,
  UnauthorizedException,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Caller } from './access.js';
import { LiveUpdates } from './live-updates.js';
import { browserModule, PAGE, PAGE_CSP } from './page.js';
import { QuotaReader } from './quota-reader.js';
import { snapshot, type ConsoleQuota, type ConsoleSnapshot } from './snapshot.js';

/** The page and the read-only JSON API; every API answer is for the caller's bearer token only. */
@Controller()
export class ConsoleController {
  constructor(
    private readonly reader: QuotaReader,
    private readonly live: LiveUpdates,
  ) {}

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', PAGE_CSP)
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Referrer-Policy', 'no-referrer')
  page(): string {
    return PAGE;
  }

  /** The page's code (browser/*.ts, compiled); public like the page itself. */
  @Get('browser/:file')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Cache-Control', 'no-cache')
  async browserModule(@Param('file') file: string): Promise<string> {
    const code = await browserModule(file);
    if (code === undefined) throw new NotFoundException(`the console serves no browser module ${file}`);
    return code;
  }

  /** Every quota the caller may read. */
  @Get('api/quotas')
  @Header('Cache-Control', 'no-store')
  async quotas(
    @Headers('authorization') authorization: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ConsoleSnapshot> {
    const caller = await this.authenticate(authorization, reply);
    const now = new Date();
    const visible = await this.reader.visible(caller);
    return snapshot(caller.username, await Promise.all(visible.map((v) => this.reader.present(v, now))), now);
  }

  @Get('api/namespaces/:namespace/quotas/:name')
  @Header('Cache-Control', 'no-store')
  async quota(
    @Headers('authorization') authorization: string | undefined,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ConsoleQuota> {
    const caller = await this.authenticate(authorization, reply);
    return this.reader.present(await this.reader.one(caller, namespace, name), new Date());
  }

  /** Server-sent events (see LiveUpdates); a missing or bad token is refused before the stream starts. */
  @Get('api/events')
  async events(
    @Headers('authorization') authorization: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const caller = await this.authenticate(authorization, reply);
    this.live.checkCapacity();
    reply.hijack(); // the stream is written to the raw response from here on
    this.live.serve(authorization!, caller, reply.raw);
  }

  /** A 401 names the scheme to use (RFC 9110 asks for WWW-Authenticate). */
  private async authenticate(authorization: string | undefined, reply: FastifyReply): Promise<Caller> {
    try {
      return await this.reader.authenticate(authorization);
    } catch (err) {
      if (err instanceof UnauthorizedException)
        reply.header('WWW-Authenticate', 'Bearer realm="karmada-quota"');
      throw err;
    }
  }
}
