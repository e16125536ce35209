package space.arim.libertybans.api.event;

import space.arim.libertybans.api.Operator;
import space.arim.libertybans.api.punish.Punishment;
import space.arim.omnibus.events.AsyncEvent;

public interface PostPardonEvent extends AsyncEvent {
    Operator getOperator();

    Punishment getPunishment();
}
