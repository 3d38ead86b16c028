/// The server's schema, as frozen migrations: each is literal SQL that never changes once
/// shipped (a later change is a new migration), one text per dialect where the two differ
/// only in the name of the bytes type. `sync_schema` records which have run.
enum SyncSchema {
    struct Migration: Sendable {
        let version: Int64
        let statements: @Sendable (SQLSyncStore.Dialect) -> [String]
    }

    static let migrations: [Migration] = [
        Migration(version: 1) { dialect in
            let bytes = dialect == .postgres ? "BYTEA" : "BLOB"
            return [
                """
                CREATE TABLE accounts (
                    account_id TEXT PRIMARY KEY,
                    created_at BIGINT NOT NULL,
                    quota_records BIGINT NOT NULL,
                    quota_bytes BIGINT NOT NULL,
                    used_records BIGINT NOT NULL DEFAULT 0,
                    used_bytes BIGINT NOT NULL DEFAULT 0)
                """,
                """
                CREATE TABLE devices (
                    account_id TEXT NOT NULL REFERENCES accounts(account_id),
                    device_id TEXT NOT NULL,
                    token_hash \(bytes) NOT NULL UNIQUE,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (account_id, device_id))
                """,
                """
                CREATE TABLE zones (
                    account_id TEXT NOT NULL REFERENCES accounts(account_id),
                    zone_id TEXT NOT NULL,
                    seq BIGINT NOT NULL DEFAULT 0,
                    PRIMARY KEY (account_id, zone_id))
                """,
                """
                CREATE TABLE records (
                    account_id TEXT NOT NULL,
                    zone_id TEXT NOT NULL,
                    record_id TEXT NOT NULL,
                    rtype BIGINT NOT NULL,
                    version BIGINT NOT NULL,
                    seq BIGINT NOT NULL,
                    tombstone BIGINT NOT NULL,
                    body \(bytes) NOT NULL,
                    size BIGINT NOT NULL,
                    PRIMARY KEY (account_id, zone_id, record_id),
                    FOREIGN KEY (account_id, zone_id) REFERENCES zones(account_id, zone_id))
                """,
                "CREATE INDEX records_feed ON records(account_id, zone_id, seq)",
                """
                CREATE TABLE membership (
                    account_id TEXT NOT NULL REFERENCES accounts(account_id),
                    idx BIGINT NOT NULL,
                    entry \(bytes) NOT NULL,
                    PRIMARY KEY (account_id, idx))
                """,
            ]
        },
        // Pairing mailboxes: a member opens one under a small number (the code's first part);
        // the new device claims it once; each side posts opaque messages the other reads.
        Migration(version: 2) { dialect in
            let bytes = dialect == .postgres ? "BYTEA" : "BLOB"
            return [
                """
                CREATE TABLE pairings (
                    nameplate BIGINT PRIMARY KEY,
                    pairing_id TEXT NOT NULL UNIQUE,
                    account_id TEXT NOT NULL REFERENCES accounts(account_id),
                    device_id TEXT NOT NULL,
                    claim_hash \(bytes),
                    expires_at BIGINT NOT NULL)
                """,
                """
                CREATE TABLE pairing_messages (
                    pairing_id TEXT NOT NULL,
                    side BIGINT NOT NULL,
                    idx BIGINT NOT NULL,
                    body \(bytes) NOT NULL,
                    PRIMARY KEY (pairing_id, side, idx))
                """,
            ]
        },
    ]
}
