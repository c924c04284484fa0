export interface Tenant {
  id: string;
  name: string;
  createdAt: Date;
}
