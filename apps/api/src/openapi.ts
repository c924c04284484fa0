import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Gatehouse')
    .setDescription('Applications and API keys, proxies with sandboxed transforms, and audit logs.')
    .setVersion('1')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'SVC-API-KEY' }, 'api-key')
    .build();
  return SwaggerModule.createDocument(app, config);
}

/** `/openapi.json` and the browsable `/docs`, both without authentication. */
export function mountOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, buildOpenApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
  });
}
