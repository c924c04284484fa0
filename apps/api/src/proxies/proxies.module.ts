import { DynamicModule, Inject, Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import {
  ApplicationRepository,
  AuthenticateApiKey,
  AuthenticateSvcBridgeCall,
  AuthenticationThrottle,
  Clock,
  CreateProxy,
  DeleteProxy,
  DestinationPolicy,
  GetProxy,
  ListProxies,
  PatchProxy,
  ProxyRepository,
  ReplaceProxy,
  ResolveProxyForInvocation,
  TransformCompiler,
  UnitOfWork,
} from '@gatehouse/domain';
import { Reactor } from '@gatehouse/reactor';
import { AppConfig } from '@gatehouse/config';
import { useCase } from '../use-case.provider';
import { createDestinationAgent } from '../proxy-invocation/destination-agent';
import { IpDestinationPolicy } from '../proxy-invocation/destination-policy';
import { DESTINATION_DISPATCHER, PROXY_INVOCATION_SETTINGS, ProxyInvocation, ProxyInvocationSettings } from '../proxy-invocation/proxy-invocation.handler';
import { ProxyDetokenization } from '../proxy-invocation/proxy-detokenization';
import { SvcBridgeListener } from '../proxy-invocation/svc-bridge';
import { TokensModule } from '../tokens/tokens.module';
import { ProxiesController } from './proxies.controller';
import { ReactorTransformCompiler } from './reactor-transform-compiler';

/** Closes the process's one reactor (its sandbox processes) when the app stops. */
@Injectable()
class ReactorShutdown implements OnApplicationShutdown {
  constructor(@Inject(Reactor) private readonly reactor: Reactor) {}

  async onApplicationShutdown(): Promise<void> {
    await this.reactor.close();
  }
}

/** Proxy management (/proxies), the /proxy data plane, the transform sandbox and the svc bridge. */
@Module({})
export class ProxiesModule {
  static forRoot(config: AppConfig): DynamicModule {
    const policy = new IpDestinationPolicy(config.proxyAllowHttp, config.proxyAllowedPrivateCidrs);
    const settings: ProxyInvocationSettings = {
      bodyLimitBytes: config.bodyLimitBytes,
      destinationTimeoutMs: config.proxyTimeoutMs,
      transformConsoleLog: config.transformConsoleLog,
    };
    return {
      module: ProxiesModule,
      // Outbound proxies detokenize with the Detokenize use case.
      imports: [TokensModule],
      controllers: [ProxiesController],
      providers: [
        { provide: DestinationPolicy, useValue: policy },
        { provide: PROXY_INVOCATION_SETTINGS, useValue: settings },
        {
          provide: DESTINATION_DISPATCHER,
          useFactory: () => createDestinationAgent({ policy, connectTimeoutMs: Math.min(10_000, config.proxyTimeoutMs) }),
        },
        {
          provide: Reactor,
          useFactory: () => {
            const logger = new Logger('Reactor');
            return new Reactor({
              poolSize: config.reactorPoolSize,
              timeoutMs: config.reactorTimeoutMs,
              memoryLimitMb: config.reactorMemoryMb,
              tenantMaxConcurrency: config.reactorTenantMaxConcurrency,
              tenantMaxQueue: config.reactorTenantMaxQueue,
              // Transforms' own requests follow the proxies' destination policy.
              outbound: { allowHttp: config.proxyAllowHttp, allowedPrivateCidrs: config.proxyAllowedPrivateCidrs },
              // Contained to its sandbox process, which is replaced; worth knowing about all the same.
              onCatastrophicError: (message) => logger.error(`V8 lost control of a sandbox isolate; its sandbox process was replaced: ${message}`),
            });
          },
        },
        ReactorShutdown,
        { provide: TransformCompiler, inject: [Reactor], useFactory: (reactor: Reactor) => new ReactorTransformCompiler(reactor) },
        useCase(CreateProxy, [UnitOfWork, Clock, TransformCompiler, DestinationPolicy]),
        useCase(ReplaceProxy, [UnitOfWork, Clock, TransformCompiler, DestinationPolicy]),
        useCase(PatchProxy, [UnitOfWork, Clock, TransformCompiler, DestinationPolicy]),
        useCase(DeleteProxy, [UnitOfWork]),
        useCase(GetProxy, [ProxyRepository]),
        useCase(ListProxies, [ProxyRepository]),
        useCase(ResolveProxyForInvocation, [ProxyRepository, AuthenticateApiKey, AuthenticationThrottle]),
        useCase(AuthenticateSvcBridgeCall, [ApplicationRepository, Clock]),
        SvcBridgeListener,
        ProxyDetokenization,
        ProxyInvocation,
      ],
      exports: [ProxyInvocation],
    };
  }
}
