package ac.grim.grimac.api;

/** In GrimAPI it also extends AbstractProcessor and BasicStatus. */
public interface AbstractCheck {
    String getCheckName();

    double getViolations();

    boolean isExperimental();
}
