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

jar="$(ls "$REPO_ROOT"/plugin/paper/target/Warden-*.jar 2>/dev/null | grep -v original- | head -1 || true)"
[[ -n "$jar" && -f "$jar" ]] || die "the build did not produce plugin/paper/target/Warden-*.jar"
# The jar must hold our code only: never the server API surface, Gson, LuckPerms, the anti-cheat
# APIs or a punishment plugin's API (LiteBans, LibertyBans and its Omnibus, AdvancedBan).
if jar tf "$jar" | grep -qE '^(org/bukkit|io/papermc|com/google/gson|net/luckperms|net/kyori|ac/grim|me/frep|litebans|space/arim|me/leoko)/'; then
    die "$jar holds classes the server provides; check the shade plugin's includes"
fi
velocity="$(ls "$REPO_ROOT"/plugin/velocity/target/Warden-Velocity-*.jar 2>/dev/null | grep -v original- | head -1 || true)"
[[ -n "$velocity" && -f "$velocity" ]] || die "the build did not produce plugin/velocity/target/Warden-Velocity-*.jar"
# The proxy's jar likewise: never the Velocity API, Guice, SnakeYAML, Gson or adventure.
if jar tf "$velocity" | grep -qE '^(com/velocitypowered|com/google|org/yaml|net/kyori)/'; then
    die "$velocity holds classes the proxy provides; check the shade plugin's includes"
fi
bungee="$(ls "$REPO_ROOT"/plugin/bungee/target/Warden-Bungee-*.jar 2>/dev/null | grep -v original- | head -1 || true)"
[[ -n "$bungee" && -f "$bungee" ]] || die "the build did not produce plugin/bungee/target/Warden-Bungee-*.jar"
if jar tf "$bungee" | grep -qE '^(net/md_5|com/google|org/yaml)/'; then
    die "$bungee holds classes the proxy provides; check the shade plugin's includes"
fi
log "proxy plugins: $velocity (Velocity), $bungee (BungeeCord)"
printf '%s\n' "$jar"
