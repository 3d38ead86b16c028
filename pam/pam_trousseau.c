/*
 * pam_trousseau: unlocks the user's Trousseau keychain with the login password, and keeps
 * the keychain password in step when the login password changes.
 *
 *   auth     optional pam_trousseau.so [security=/usr/bin/security]
 *   session  optional pam_trousseau.so [security=...]
 *   password optional pam_trousseau.so [security=...]
 *
 * auth: the password (PAM_AUTHTOK, asked for when no module before this one got it) goes to
 * the user's keychain at once when the user's daemon already runs (a screen unlock); at a
 * login, before the session has its runtime directory, it is kept in the PAM handle (zeroed
 * when the handle ends) and used by session (open_session), as pam_gnome_keyring does.
 * password: on PAM_UPDATE_AUTHTOK, the old and new passwords change the keychain password
 * (when the keychain password was the old login password).
 *
 * The password reaches the keychain as the user would type it: a child drops to the user
 * (initgroups, setgid, setuid) and runs `security unlock-keychain` (or
 * `set-keychain-password`) with the password on a pipe to its standard input — never in
 * argv, the environment or a file. A wrong password fails as `unlock-keychain` does, and
 * counts towards the keychain's unlock throttle. This module never makes login fail: any
 * failure of its own is PAM_IGNORE, and the child is killed after a few seconds. It logs
 * no password.
 */
#define _GNU_SOURCE
#define PAM_SM_AUTH
#define PAM_SM_SESSION
#define PAM_SM_PASSWORD
#include <security/pam_ext.h>
#include <security/pam_modules.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#ifndef TROUSSEAU_SECURITY
#define TROUSSEAU_SECURITY "/usr/bin/security"
#endif

static const char *stash_name = "pam_trousseau_authtok";
static const int child_seconds = 5;

static const char *security_path(int argc, const char **argv) {
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "security=", 9) == 0) {
            return argv[i] + 9;
        }
    }
    return TROUSSEAU_SECURITY;
}

static void free_secret(pam_handle_t *pamh, void *data, int status) {
    (void)pamh;
    (void)status;
    if (data != NULL) {
        explicit_bzero(data, strlen(data));
        free(data);
    }
}

/* The runtime directory clients of the user's session use: the session's, or systemd's
   /run/user/UID when it exists; NULL (clients then use /tmp/trousseau-UID) otherwise. */
static const char *runtime_directory(pam_handle_t *pamh, const struct passwd *user, char *buffer, size_t size) {
    const char *from_session = pam_getenv(pamh, "XDG_RUNTIME_DIR");
    if (from_session != NULL && from_session[0] != '\0') {
        return from_session;
    }
    snprintf(buffer, size, "/run/user/%lu", (unsigned long)user->pw_uid);
    struct stat info;
    if (stat(buffer, &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == user->pw_uid) {
        return buffer;
    }
    return NULL;
}

/* Whether the user's default keychain has a daemon listening now (its socket exists). */
static int daemon_runs(const struct passwd *user, const char *runtime) {
    char socket_path[512];
    if (runtime != NULL) {
        snprintf(socket_path, sizeof socket_path, "%s/trousseau/default.sock", runtime);
    } else {
        snprintf(socket_path, sizeof socket_path, "/tmp/trousseau-%lu/default.sock", (unsigned long)user->pw_uid);
    }
    struct stat info;
    return stat(socket_path, &info) == 0 && S_ISSOCK(info.st_mode) && info.st_uid == user->pw_uid;
}

/* Runs `security COMMAND` as the user with `input` on its standard input; its exit status,
   or -1. */
static int run_as_user(pam_handle_t *pamh, const struct passwd *user, const char *runtime, const char *security,
                       const char *command, const char *input) {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
        return -1;
    }
    pid_t child = fork();
    if (child < 0) {
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        return -1;
    }
    if (child == 0) {
        /* The user's identity, for good, before anything of theirs runs. */
        if (initgroups(user->pw_name, user->pw_gid) != 0 || setgid(user->pw_gid) != 0 || setuid(user->pw_uid) != 0 ||
            getuid() != user->pw_uid || geteuid() != user->pw_uid) {
            _exit(126);
        }
        int null = open("/dev/null", O_RDWR);
        if (dup2(pipe_fds[0], 0) < 0 || null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) {
            _exit(126);
        }
        char home[512], runtime_variable[600];
        snprintf(home, sizeof home, "HOME=%s", user->pw_dir);
        char *environment[4] = {home, "PATH=/usr/bin:/bin", NULL, NULL};
        if (runtime != NULL) {
            snprintf(runtime_variable, sizeof runtime_variable, "XDG_RUNTIME_DIR=%s", runtime);
            environment[2] = runtime_variable;
        }
        char *arguments[] = {"security", (char *)command, NULL};
        execve(security, arguments, environment);
        _exit(127);
    }
    close(pipe_fds[0]);
    /* The child may exit without reading (no such keychain): no SIGPIPE for the caller. */
    struct sigaction ignore = {.sa_handler = SIG_IGN}, previous;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &previous);
    size_t length = strlen(input), written = 0;
    while (written < length) {
        ssize_t n = write(pipe_fds[1], input + written, length - written);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        written += (size_t)n;
    }
    close(pipe_fds[1]);
    sigaction(SIGPIPE, &previous, NULL);

    int status = 0;
    for (int waited = 0; waited < child_seconds * 100; waited++) {
        pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child) {
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        }
        if (done < 0 && errno != EINTR) {
            return -1;
        }
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    pam_syslog(pamh, LOG_WARNING, "security %s did not finish in %d s", command, child_seconds);
    return -1;
}

/* Unlocks with `password` (a line on standard input). */
static int unlock(pam_handle_t *pamh, const struct passwd *user, const char *runtime, const char *security, const char *password) {
    size_t length = strlen(password);
    char *line = malloc(length + 2);
    if (line == NULL) {
        return -1;
    }
    memcpy(line, password, length);
    line[length] = '\n';
    line[length + 1] = '\0';
    int status = run_as_user(pamh, user, runtime, security, "unlock-keychain", line);
    explicit_bzero(line, length + 2);
    free(line);
    return status;
}

static const struct passwd *the_user(pam_handle_t *pamh) {
    const char *name = NULL;
    if (pam_get_user(pamh, &name, NULL) != PAM_SUCCESS || name == NULL) {
        return NULL;
    }
    return getpwnam(name);
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    const struct passwd *user = the_user(pamh);
    const char *password = NULL;
    if (user == NULL || pam_get_authtok(pamh, PAM_AUTHTOK, &password, NULL) != PAM_SUCCESS || password == NULL) {
        return PAM_IGNORE;
    }
    char buffer[64];
    const char *runtime = runtime_directory(pamh, user, buffer, sizeof buffer);
    if (daemon_runs(user, runtime)) {
        int status = unlock(pamh, user, runtime, security_path(argc, argv), password);
        if (status != 0) {
            pam_syslog(pamh, LOG_NOTICE, "the keychain of %s was not unlocked (status %d)", user->pw_name, status);
        }
        return PAM_IGNORE;
    }
    /* A login: the session opens the keychain once it has its runtime directory. */
    char *copy = strdup(password);
    if (copy == NULL || pam_set_data(pamh, stash_name, copy, free_secret) != PAM_SUCCESS) {
        free_secret(pamh, copy, 0);
    }
    return PAM_IGNORE;
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_IGNORE;
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    const void *stashed = NULL;
    if (pam_get_data(pamh, stash_name, &stashed) != PAM_SUCCESS || stashed == NULL) {
        return PAM_IGNORE;
    }
    const struct passwd *user = the_user(pamh);
    if (user != NULL) {
        char buffer[64];
        const char *runtime = runtime_directory(pamh, user, buffer, sizeof buffer);
        int status = unlock(pamh, user, runtime, security_path(argc, argv), stashed);
        if (status != 0) {
            pam_syslog(pamh, LOG_NOTICE, "the keychain of %s was not unlocked (status %d)", user->pw_name, status);
        }
    }
    pam_set_data(pamh, stash_name, NULL, NULL);  /* runs free_secret on the copy */
    return PAM_IGNORE;
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_IGNORE;
}

PAM_EXTERN int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    const struct passwd *user = the_user(pamh);
    if (user == NULL) {
        return PAM_IGNORE;
    }
    const char *old = NULL, *new = NULL;
    if (flags & PAM_PRELIM_CHECK) {
        /* Ask for the current password now if no module before did, as pam_unix does. */
        pam_get_authtok(pamh, PAM_OLDAUTHTOK, &old, NULL);
        return PAM_IGNORE;
    }
    if (!(flags & PAM_UPDATE_AUTHTOK) || pam_get_authtok(pamh, PAM_OLDAUTHTOK, &old, NULL) != PAM_SUCCESS || old == NULL ||
        pam_get_authtok(pamh, PAM_AUTHTOK, &new, NULL) != PAM_SUCCESS || new == NULL) {
        return PAM_IGNORE;
    }
    /* set-keychain-password reads the old password, then the new one twice. */
    size_t size = strlen(old) + 2 * strlen(new) + 4;
    char *lines = malloc(size);
    if (lines == NULL) {
        return PAM_IGNORE;
    }
    snprintf(lines, size, "%s\n%s\n%s\n", old, new, new);
    char buffer[64];
    const char *runtime = runtime_directory(pamh, user, buffer, sizeof buffer);
    int status = run_as_user(pamh, user, runtime, security_path(argc, argv), "set-keychain-password", lines);
    explicit_bzero(lines, size);
    free(lines);
    if (status != 0) {
        pam_syslog(pamh, LOG_NOTICE, "the keychain password of %s was not changed (status %d)", user->pw_name, status);
    }
    return PAM_IGNORE;
}
