package space.arim.libertybans.api.event;

import space.arim.libertybans.api.punish.Punishment;
import space.arim.omnibus.events.AsyncEvent;

public interface PostPunishEvent extends AsyncEvent {
    Punishment getPunishment();
}
