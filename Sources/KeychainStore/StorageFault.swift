#if canImport(Glibc)
import Glibc
#endif

/// Why a write to the database files may have failed, when SQLite cannot say.
///
/// SQLite reports ENOSPC as SQLITE_FULL, but a write refused over the file-size limit
/// (RLIMIT_FSZ: EFBIG) as a plain SQLITE_IOERR_WRITE, and by then the errno it keeps
/// (`sqlite3_system_errno`) is 0. So after an I/O error the store looks at the limit and
/// the free space itself.
enum StorageFault {
    /// Room a write of the store may need: a group commit's WAL frames.
    static let margin = 256 * 1024

    /// EFBIG when a file of the store is within ``margin`` of the file-size limit, ENOSPC
    /// when its file system has less than ``margin`` left, else 0.
    static func errno(files: [String]) -> Int32 {
        var limit = rlimit()  // resource 1: RLIMIT_FSZ, a macro alias Swift does not import
        if getrlimit(__rlimit_resource_t(1), &limit) == 0, limit.rlim_cur != rlim_t.max {
            for file in files {
                var info = stat()
                if stat(file, &info) == 0, UInt64(info.st_size) + UInt64(margin) >= UInt64(limit.rlim_cur) { return EFBIG }
            }
        }
        var space = statvfs()
        if let file = files.first, statvfs(file, &space) == 0, UInt64(space.f_bavail) * UInt64(space.f_frsize) < UInt64(margin) {
            return ENOSPC
        }
        return 0
    }
}
