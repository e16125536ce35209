package space.arim.libertybans.api.punish;

import space.arim.libertybans.api.Operator;
import space.arim.libertybans.api.PunishmentType;
import space.arim.libertybans.api.Victim;
import space.arim.libertybans.api.scope.ServerScope;

public interface PunishmentBase {
    PunishmentType getType();

    Victim getVictim();

    Operator getOperator();

    String getReason();

    ServerScope getScope();
}
