#!/usr/bin/env bash
# Builds the game-server plugin (plugin/: core, Paper module, compile-only server API surface) and
# the proxy plugins (plugin/velocity, plugin/bungee), and runs their unit and listener tests. Installs Java 17 and Maven from Debian when missing; the
# dependencies come from Maven Central (~/.m2 caches them).
#
#   ./deploy/plugin.sh [--skip-tests]
#
# Everything Maven says goes to stderr; the last line on stdout is the jar's path
# (plugin/paper/target/Warden-<version>.jar), the file to copy into a server's plugins/ folder; the
# proxy jars (plugin/velocity/target/Warden-Velocity-<version>.jar and
# plugin/bungee/target/Warden-Bungee-<version>.jar) are named on stderr.
set -euo pipefail

# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

mvn_args=(-B -ntp -f plugin/pom.xml)
while (($# > 0)); do
    case "$1" in
    --skip-tests) mvn_args+=(-DskipTests) ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
    shift
done

section "plugin: Java and Maven"
ensure_java_maven_installed
log "$(javac -version 2>&1); $(mvn -v 2>/dev/null | head -1 | sed 's/\x1b\[[0-9;]*m//g')"

section "plugin: build and test"
mvn "${mvn_args[@]}" clean verify >&2

# checked_jar MODULE NAME FORBIDDEN: the jar MODULE/target/NAME-<version>.jar (not the shade
# plugin's original-*), which must hold none of the FORBIDDEN packages (an extended regex of
# path prefixes): the platform provides them, so only our own code is shaded in.
checked_jar() {
    local module="$1" name="$2" forbidden="$3" found
    found="$(find "$REPO_ROOT/plugin/$module/target" -maxdepth 1 -name "$name-*.jar" 2>/dev/null | head -1)"
    [[ -n "$found" ]] || die "the build did not produce plugin/$module/target/$name-*.jar"
    if jar tf "$found" | grep -qE "^($forbidden)/"; then
        die "$found holds classes the platform provides; check the shade plugin's includes"
    fi
    printf '%s\n' "$found"
}
# The server plugin: never the server API surface, Gson, LuckPerms, adventure, the anti-cheat
# APIs or a punishment plugin's API (LiteBans, LibertyBans and its Omnibus, AdvancedBan).
jar="$(checked_jar paper Warden 'org/bukkit|io/papermc|com/google/gson|net/luckperms|net/kyori|ac/grim|me/frep|litebans|space/arim|me/leoko')"
# The proxies': never the Velocity or BungeeCord API, Guice, SnakeYAML, Gson or adventure.
velocity="$(checked_jar velocity Warden-Velocity 'com/velocitypowered|com/google|org/yaml|net/kyori')"
bungee="$(checked_jar bungee Warden-Bungee 'net/md_5|com/google|org/yaml')"
log "proxy plugins: $velocity (Velocity), $bungee (BungeeCord)"
printf '%s\n' "$jar"
