import Foundation
import SanadCore

/// A restore as `sanad form restore` and the web app's Forms place make it, with the same checks and merge rules:
/// the backup checked whole before anything is written (`FormsArchive.plan`; a single-session JSON backup of an
/// earlier version only when unkeyed backups are allowed), then, when anything is written and the store holds
/// sessions, the store as it was copied into its backups folder, then each session merged
/// (`SessionBackup.Plan.decision`: the newer version wins unless replacing).
public struct FormsRestore {
    public let store: any FormStore
    /// The store folder (its `backups/` keeps the copy made before a restore).
    public let directory: URL
    public let catalog: FormCatalog
    public let today: CivilDate
    /// The store's own backup key (`backup.key`): its archives are trusted, and the copy aside is digested with it.
    public let key: BackupKey

    public init(store: any FormStore, directory: URL, catalog: FormCatalog, today: CivilDate, key: BackupKey) {
        self.store = store
        self.directory = directory
        self.catalog = catalog
        self.today = today
        self.key = key
    }

    /// The checked plan for the backup `bytes` (`file` names it in errors), trusting the store's key and
    /// `otherKeys` (other stores' `backup.key`), and unkeyed backups only when `allowUnkeyed`.
    public func plan(
        _ bytes: [UInt8], file: String, otherKeys: [BackupKey] = [], allowUnkeyed: Bool = false
    ) throws -> FormsArchive.Plan {
        if FormsArchive.isArchive(bytes) {
            return try FormsArchive.plan(
                bytes, file: file, catalog: catalog, store: store, today: today,
                trust: BackupTrust(keys: [key] + otherKeys, allowUnkeyed: allowUnkeyed))
        }
        guard allowUnkeyed else {
            throw FormError.invalidBackup(
                file: file,
                problem: "a single-session JSON backup (an earlier version's format) has no keyed digest; if "
                    + "you made it yourself, restore it with --allow-unkeyed")
        }
        let one = try SessionBackup.plan(bytes, file: file, catalog: catalog, store: store, today: today)
        return FormsArchive.Plan(sessions: [one], files: [])
    }

    /// Writes `plan`: the store as it was copied aside first (when a session is written and the store has any;
    /// its file is returned with how many sessions it holds), then each session as the merge rules decide.
    public func apply(_ plan: FormsArchive.Plan, replacing: Bool, now: Date) throws -> (
        aside: (url: URL, sessions: Int)?, decisions: [(id: String, decision: RestoreDecision)]
    ) {
        let existing = try store.sessions()
        var aside: (url: URL, sessions: Int)?
        if plan.sessions.contains(where: { $0.decision(replacing: replacing).writes }) && !existing.isEmpty {
            let url = try FormBackups(storeDirectory: directory).write(
                try FormsArchive.make(existing, catalog: catalog, store: store, today: today, now: now, key: key),
                kind: .beforeRestore, now: now)
            aside = (url, existing.count)
        }
        return (aside, try FormsArchive.restore(plan, into: store, replacing: replacing))
    }
}

extension BackupKey {
    /// The key of the store folder `directory` (`backup.key`), made on first use (the folder too).
    public static func ofStore(_ directory: URL) throws -> BackupKey {
        do { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) } catch {
            throw FormError.store(
                "\(directory.path): the store folder cannot be created (\(error.localizedDescription))")
        }
        return try BackupKey.loadOrCreate(directory: directory)
    }
}
