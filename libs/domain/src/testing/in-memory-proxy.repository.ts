import { ConflictError } from '../shared/domain-error';
import { Page, PageQuery } from '../shared/page';
import { Proxy } from '../proxies/proxy';
import { ProxyFilter, ProxyRepository } from '../proxies/proxy.repository';
import { configurationBytes } from '../proxies/proxy-limits';
import { HoldsTable, InMemoryTable, pageInMemory } from './in-memory-ports';

/** The ProxyRepository of unit tests; same observable behaviour as the TypeORM adapter (the persistence suite runs both). */
export class InMemoryProxyRepository extends ProxyRepository implements HoldsTable {
  readonly table = new InMemoryTable<Proxy>();

  all(): Proxy[] {
    return this.table.all();
  }

  async insert(proxy: Proxy): Promise<void> {
    if (this.table.rows.has(proxy.id) || this.keyTaken(proxy)) throw new ConflictError('The resource conflicts with an existing one');
    this.table.rows.set(proxy.id, structuredClone(proxy));
  }

  async update(proxy: Proxy): Promise<boolean> {
    const current = this.table.rows.get(proxy.id);
    if (!current || current.tenantId !== proxy.tenantId) return false;
    if (this.keyTaken(proxy)) throw new ConflictError('The resource conflicts with an existing one');
    this.table.rows.set(proxy.id, structuredClone(proxy));
    return true;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const current = this.table.rows.get(id);
    return current?.tenantId === tenantId ? this.table.rows.delete(id) : false;
  }

  async findById(tenantId: string, id: string): Promise<Proxy | null> {
    const row = this.table.rows.get(id);
    return row?.tenantId === tenantId ? structuredClone(row) : null;
  }

  async findByKey(key: string): Promise<Proxy | null> {
    const row = [...this.table.rows.values()].find((p) => p.key === key);
    return row ? structuredClone(row) : null;
  }

  async list(tenantId: string, filter: ProxyFilter, page: PageQuery): Promise<Page<Proxy>> {
    const ids = filter.ids?.length ? new Set(filter.ids.map((id) => id.toLowerCase())) : undefined;
    const name = filter.name === undefined ? undefined : nameMatcher(filter.name);
    const rows = this.all().filter((p) => p.tenantId === tenantId && (!ids || ids.has(p.id)) && (!name || name.test(p.name)));
    return pageInMemory(rows, page);
  }

  async configurationBytes(tenantId: string, exceptId?: string): Promise<number> {
    return this.all()
      .filter((p) => p.tenantId === tenantId && p.id !== exceptId)
      .reduce((sum, p) => sum + configurationBytes(p.configuration), 0);
  }

  private keyTaken(proxy: Proxy): boolean {
    return [...this.table.rows.values()].some((p) => p.id !== proxy.id && p.key === proxy.key);
  }
}

/** `*` matches any run of characters, everything else literally, case-insensitively, anywhere in the name. */
function nameMatcher(filter: string): RegExp {
  const source = filter
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(source, 'is');
}
