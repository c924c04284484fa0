import { NotFoundError } from '../shared/domain-error';
import { Page, PageQuery } from '../shared/page';
import { Application } from './application';
import { ApplicationFilter, ApplicationRepository } from './application.repository';
import { Principal } from './principal';

export class GetApplication {
  constructor(private readonly applications: ApplicationRepository) {}

  async execute(principal: Principal, id: string): Promise<Application> {
    const app = await this.applications.findById(principal.tenantId, id);
    if (!app) throw new NotFoundError('Application');
    return app;
  }
}

export class ListApplications {
  constructor(private readonly applications: ApplicationRepository) {}

  execute(principal: Principal, filter: ApplicationFilter, page: PageQuery): Promise<Page<Application>> {
    return this.applications.list(principal.tenantId, filter, page);
  }
}
