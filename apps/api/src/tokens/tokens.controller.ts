import { ArgumentMetadata, Controller, Delete, Get, HttpCode, Injectable, Param, Patch, PipeTransform, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CreateToken, DeleteToken, Detokenize, GetToken, isTokenId, ListTokens, Principal, Tokenize, UpdateToken, ValidationError } from '@gatehouse/domain';
import { CurrentPrincipal } from '../auth/auth.decorators';
import { ValidatedBody, VALIDATION_PIPE } from '../http/validation';
import {
  CREATE_TOKEN_EXAMPLES,
  CreateTokenDto,
  ListTokensQueryDto,
  PatchTokenDto,
  TokenListResponse,
  TokenResponse,
  toTokenInput,
  toTokenizeResponse,
  toTokenPatch,
  toTokenResponse,
} from './tokens.dto';

/** A path token id: 1 to 400 characters of A-Z, a-z, 0-9, _ and - (a 400 before anything is looked up). */
@Injectable()
export class TokenIdParamPipe implements PipeTransform<string, string> {
  transform(value: string, metadata: ArgumentMetadata): string {
    if (!isTokenId(value)) throw ValidationError.single(metadata.data ?? 'id', 'must be 1 to 400 characters of A-Z, a-z, 0-9, _ and -');
    return value;
  }
}

const METADATA_FILTER = 'metadata.';

/** The query without its `metadata.<key>` filters, which the DTO cannot name (any key); the route reads them apart. */
class WithoutMetadataFilters implements PipeTransform {
  transform(value: Record<string, unknown>): Record<string, unknown> {
    return Object.fromEntries(Object.entries(value ?? {}).filter(([name]) => !name.startsWith(METADATA_FILTER)));
  }
}

function metadataFilters(req: Request): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.query as Record<string, unknown>)) {
    if (!name.startsWith(METADATA_FILTER)) continue;
    if (typeof value !== 'string') throw ValidationError.single(name.slice(0, 100), 'must be given once');
    filters[name.slice(METADATA_FILTER.length)] = value;
  }
  return filters;
}

// Any JSON: the domain walks it (Tokenize, Detokenize) and validates every token request and expression in it.
const ANY_JSON_BODY = {
  schema: {
    oneOf: [
      { type: 'object', additionalProperties: true },
      { type: 'array', items: {} },
    ],
  },
};

/**
 * The token vault (CONTRACT.md section 12). Permissions are the domain's: a token permission may come from plain
 * `permissions` or from an access rule only, so each use case checks it (403) and then the rule of each token.
 */
@ApiTags('tokens')
@ApiSecurity('api-key')
@Controller()
export class TokensController {
  constructor(
    private readonly createToken: CreateToken,
    private readonly getToken: GetToken,
    private readonly listTokens: ListTokens,
    private readonly updateToken: UpdateToken,
    private readonly deleteToken: DeleteToken,
    private readonly tokenize: Tokenize,
    private readonly detokenize: Detokenize,
  ) {}

  @Post('tokens')
  @ApiOperation({ operationId: 'createToken', summary: 'Create a token (token:create)' })
  @ApiBody({ type: CreateTokenDto, examples: CREATE_TOKEN_EXAMPLES })
  @ApiCreatedResponse({ type: TokenResponse })
  async create(
    @CurrentPrincipal() principal: Principal,
    @ValidatedBody() dto: CreateTokenDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenResponse> {
    const view = await this.createToken.execute(principal, toTokenInput(dto));
    res.location(`/tokens/${view.token.id}`);
    return toTokenResponse(view);
  }

  @Get('tokens/:id')
  @ApiOperation({ operationId: 'getToken', summary: 'Get a token (token:read); data as the access rule decides' })
  @ApiOkResponse({ type: TokenResponse })
  async get(@CurrentPrincipal() principal: Principal, @Param('id', TokenIdParamPipe) id: string): Promise<TokenResponse> {
    return toTokenResponse(await this.getToken.execute(principal, id));
  }

  @Get('v2/tokens')
  @ApiOperation({ operationId: 'listTokens', summary: 'Search tokens (token:read); newest first, keyset paged' })
  @ApiQuery({
    name: 'metadata.<key>',
    required: false,
    description: 'Tokens whose metadata has this key with this value (any number of them)',
    schema: { type: 'string' },
  })
  @ApiOkResponse({ type: TokenListResponse })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query(new WithoutMetadataFilters(), VALIDATION_PIPE) query: ListTokensQueryDto,
    @Req() req: Request,
  ): Promise<TokenListResponse> {
    const filter = { container: query.container, types: query.type, fingerprint: query.fingerprint, metadata: metadataFilters(req) };
    const page = await this.listTokens.execute(principal, filter, { size: query.size ?? 20, start: query.start });
    return { pagination: { page_size: page.size, ...(page.next ? { next: page.next } : {}) }, data: page.items.map(toTokenResponse) };
  }

  @Patch('tokens/:id')
  @ApiOperation({ operationId: 'patchToken', summary: 'Change a token (token:update; JSON merge patch, RFC 7396)' })
  @ApiConsumes('application/merge-patch+json')
  @ApiBody({ type: PatchTokenDto })
  @ApiOkResponse({ type: TokenResponse })
  async patch(
    @CurrentPrincipal() principal: Principal,
    @Param('id', TokenIdParamPipe) id: string,
    @ValidatedBody() dto: PatchTokenDto,
  ): Promise<TokenResponse> {
    return toTokenResponse(await this.updateToken.execute(principal, id, toTokenPatch(dto)));
  }

  @Delete('tokens/:id')
  @ApiOperation({ operationId: 'deleteToken', summary: 'Delete a token (token:delete)' })
  @HttpCode(204)
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() principal: Principal, @Param('id', TokenIdParamPipe) id: string): Promise<void> {
    await this.deleteToken.execute(principal, id);
  }

  @Post('tokenize')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'tokenize',
    summary: 'Tokenize (token:create): every object with `type` and `data` becomes a token, answered in the same shape; at most 100',
  })
  @ApiBody(ANY_JSON_BODY)
  @ApiOkResponse(ANY_JSON_BODY)
  async tokenizeBody(@CurrentPrincipal() principal: Principal, @Req() req: Request): Promise<unknown> {
    return toTokenizeResponse(await this.tokenize.execute(principal, req.body));
  }

  @Post('detokenize')
  @HttpCode(200)
  @ApiOperation({ operationId: 'detokenize', summary: "Detokenize (token:use): `{{ <token id> }}` expressions replaced by the tokens' data" })
  @ApiBody(ANY_JSON_BODY)
  @ApiOkResponse(ANY_JSON_BODY)
  async detokenizeBody(@CurrentPrincipal() principal: Principal, @Req() req: Request): Promise<unknown> {
    return this.detokenize.execute(principal, req.body);
  }
}
