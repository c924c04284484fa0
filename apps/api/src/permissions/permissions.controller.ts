import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { APPLICATION_TYPES, ApplicationType, PERMISSIONS } from '@gatehouse/domain';
import { ValidatedQuery } from '../http/validation';

export class PermissionsQueryDto {
  @ApiPropertyOptional({ enum: APPLICATION_TYPES })
  @IsOptional()
  @IsIn(APPLICATION_TYPES)
  application_type?: ApplicationType;
}

export class PermissionResponse {
  @ApiProperty() type: string;
  @ApiProperty() description: string;
  @ApiProperty({ enum: APPLICATION_TYPES, isArray: true }) application_types: string[];
}

/** The permission catalogue; any valid key may read it. */
@ApiTags('permissions')
@ApiSecurity('api-key')
@Controller('permissions')
export class PermissionsController {
  @Get()
  @ApiOperation({ operationId: 'listPermissions', summary: 'List the permission catalogue' })
  @ApiOkResponse({ type: [PermissionResponse] })
  list(@ValidatedQuery() query: PermissionsQueryDto): PermissionResponse[] {
    return PERMISSIONS.filter((p) => !query.application_type || p.applicationTypes.includes(query.application_type)).map((p) => ({
      type: p.type,
      description: p.description,
      application_types: [...p.applicationTypes],
    }));
  }
}
