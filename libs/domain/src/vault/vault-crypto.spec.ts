import { InMemoryVaultCrypto } from '../testing/in-memory-vault-crypto';

describe('InMemoryVaultCrypto (the fake of the VaultCrypto port)', () => {
  it('opens what it sealed, only with the same tenant and aad', async () => {
    const vault = new InMemoryVaultCrypto();
    const sealed = await vault.seal('t1', Buffer.from('4242424242424242'), 'token:t1:a');
    expect(sealed.includes(Buffer.from('4242424242424242'))).toBe(false);
    expect((await vault.open('t1', sealed, 'token:t1:a')).toString()).toBe('4242424242424242');
    await expect(vault.open('t1', sealed, 'token:t1:b')).rejects.toThrow();
    await expect(vault.open('t2', sealed, 'token:t1:a')).rejects.toThrow();
  });

  it('fingerprints per tenant', async () => {
    const vault = new InMemoryVaultCrypto();
    expect(await vault.fingerprint('t1', 'x')).toBe(await vault.fingerprint('t1', 'x'));
    expect(await vault.fingerprint('t1', 'x')).not.toBe(await vault.fingerprint('t2', 'x'));
  });
});
