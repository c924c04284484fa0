import { Module } from '@nestjs/common';
import {
  Clock,
  CreateToken,
  DeleteToken,
  Detokenize,
  ExpressionEngine,
  GetToken,
  ListTokens,
  Tokenize,
  TokenRepository,
  TokenVault,
  UnitOfWork,
  UpdateToken,
  VaultCrypto,
} from '@gatehouse/domain';
import { useCase } from '../use-case.provider';
import { LiquidExpressionEngine } from './liquid-expression-engine';
import { TokensController } from './tokens.controller';

/**
 * The token vault: /tokens, /v2/tokens, /tokenize, /detokenize. VaultCrypto comes from the (global) persistence
 * module; the use cases are exported for callers without HTTP (transforms' `svc`, proxy detokenization).
 */
@Module({
  controllers: [TokensController],
  providers: [
    { provide: ExpressionEngine, useFactory: () => new LiquidExpressionEngine() },
    {
      provide: TokenVault,
      inject: [VaultCrypto, ExpressionEngine, Clock],
      useFactory: (crypto: VaultCrypto, engine: ExpressionEngine, clock: Clock) => new TokenVault(crypto, engine, clock),
    },
    useCase(CreateToken, [UnitOfWork, TokenVault]),
    useCase(GetToken, [UnitOfWork, TokenVault, TokenRepository]),
    useCase(ListTokens, [UnitOfWork, TokenVault, TokenRepository]),
    useCase(UpdateToken, [UnitOfWork, TokenVault]),
    useCase(DeleteToken, [UnitOfWork, TokenVault]),
    useCase(Tokenize, [UnitOfWork, TokenVault]),
    useCase(Detokenize, [UnitOfWork, TokenVault, TokenRepository]),
  ],
  exports: [TokenVault, CreateToken, GetToken, ListTokens, UpdateToken, DeleteToken, Tokenize, Detokenize],
})
export class TokensModule {}
