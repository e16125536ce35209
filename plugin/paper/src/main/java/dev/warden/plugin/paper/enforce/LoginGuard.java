package dev.warden.plugin.paper.enforce;

import dev.warden.plugin.core.enforce.ActionFeed;
import dev.warden.plugin.core.enforce.Sanctions;
import java.time.Clock;
import java.time.Instant;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.player.AsyncPlayerPreLoginEvent;

/**
 * Refuses the login of a player on the local ban list, with the ban's appeal link when it has one
 * (fired on a login thread; the list is in memory: no network at login). A login another plugin refused already is left as it is.
 */
public final class LoginGuard implements Listener {
    private final Sanctions sanctions;
    private final Clock clock;

    public LoginGuard(Sanctions sanctions, Clock clock) {
        this.sanctions = sanctions;
        this.clock = clock;
    }

    @EventHandler(priority = EventPriority.HIGH)
    @SuppressWarnings("deprecation") // disallow(Result, String): Spigot's only form; Paper keeps it.
    public void onPreLogin(AsyncPlayerPreLoginEvent event) {
        if (event.getLoginResult() != AsyncPlayerPreLoginEvent.Result.ALLOWED) {
            return;
        }
        Instant now = clock.instant();
        Sanctions.Entry ban = sanctions.ban(event.getUniqueId(), now);
        if (ban != null) {
            event.disallow(AsyncPlayerPreLoginEvent.Result.KICK_BANNED, ActionFeed.banMessage(ban, now));
        }
    }
}
